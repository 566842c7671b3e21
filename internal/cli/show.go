package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

var showCmd = &command{
	summary: "show a run: status, current waits, failures, events, output",
	usage: `Usage: wend show ID [--json] [--db PATH]

Shows the newest run of workflow id ID (or the run with run id ID): its record; what it is
waiting for now (activities in flight or backing off before a retry, timers, signal waits,
child workflows and awaited workflows); signals received and not yet taken; every failure
recorded, with its category and a non-retryable mark; the event timeline, one line per
event (seq, time, type, step, detail); and the output or the failure it ended with.

Flags:
  --json      print the run detail as one JSON object: run, input, output, failure,
              waits[] (kind: activity, timer, signal, child_workflow, workflow; step, since,
              until, activity, attempt, signal, workflow_id...), pending_signals[],
              failures[] (seq, type, time, failure) and events[] (the full history)
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 shown, 1 no such workflow or run, 2 usage or I/O error.
`,
	run: runShow,
}

func runShow(e *env, args []string) int {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "show", "%s", flagError(err))
	}
	if len(pos) != 1 {
		return usageError(e, "show", "want one workflow or run ID, got %d arguments", len(pos))
	}
	b, err := openBackend(dbPath(e, *db), readRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend show: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	d, err := b.Show(pos[0])
	if err != nil {
		return commandError(e, "show", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(d, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	printDetail(e.stdout, d)
	return exitOK
}

func printDetail(w io.Writer, d server.RunDetail) {
	r := d.Run
	fmt.Fprintf(w, "workflow  %s\nrun       %s\nname      %s\nstatus    %s\n", r.WorkflowID, r.RunID, r.Name, statusText(r))
	fmt.Fprintf(w, "spec      %s (sha256 %.12s)\n", r.SpecFile, r.SpecSHA256)
	fmt.Fprintf(w, "started   %s\nclosed    %s\n", stamp(r.StartedAt), stamp(r.ClosedAt))
	if r.ParentRunID != "" {
		fmt.Fprintf(w, "parent    run %s, step %s\n", r.ParentRunID, r.ParentStep)
	}
	if len(d.Input) > 0 {
		fmt.Fprintf(w, "input     %s\n", d.Input)
	}
	if r.Open() {
		fmt.Fprintln(w, "\nwaiting for:")
		if len(d.Waits) == 0 {
			fmt.Fprintln(w, "  nothing the history shows (an engine has to drive the run: wend resume)")
		}
		for _, wt := range d.Waits {
			fmt.Fprintf(w, "  %s\n", waitText(wt))
		}
	}
	if len(d.Signals) > 0 {
		fmt.Fprintln(w, "\nsignals received, not yet taken:")
		for _, s := range d.Signals {
			fmt.Fprintf(w, "  %q (event %d)\n", s.Name, s.ReceivedSeq)
		}
	}
	if len(d.Failures) > 0 {
		fmt.Fprintln(w, "\nfailures:")
		for _, f := range d.Failures {
			at := ""
			if f.Failure.Step != "" {
				at = " " + f.Failure.Step
			}
			fmt.Fprintf(w, "  event %d %s%s: %s\n", f.Seq, f.Type, at, failureText(&f.Failure))
		}
	}
	fmt.Fprintln(w, "\nevents:")
	for _, ev := range d.Events {
		fmt.Fprintf(w, "  %4d %s %-24s %s\n", ev.Seq, ev.Time.UTC().Format("2006-01-02T15:04:05.000Z"), ev.Type,
			strings.TrimSpace(ev.Step+"  "+eventDetail(ev)))
	}
	switch {
	case d.Failure != nil:
		fmt.Fprintf(w, "\nfailure: %s\n", failureText(d.Failure))
	case r.Status == history.StatusCompleted:
		out := d.Output
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		fmt.Fprintf(w, "\noutput: %s\n", out)
	}
}

// waitText phrases one current wait.
func waitText(w server.Wait) string {
	var s string
	switch w.Kind {
	case server.WaitActivity:
		s = fmt.Sprintf("activity %s at %s (attempt %d", w.Activity, w.Step, w.Attempt)
		if !w.Until.IsZero() {
			s += ", retry due " + stamp(w.Until)
		}
		s += ")"
	case server.WaitTimer:
		s = fmt.Sprintf("timer (%s) at %s until %s", w.Purpose, w.Step, stamp(w.Until))
	case server.WaitSignal:
		s = fmt.Sprintf("signal %q at %s", w.Signal, w.Step)
	case server.WaitChild:
		s = fmt.Sprintf("child workflow %s at %s", w.WorkflowID, w.Step)
	case server.WaitWorkflow:
		s = fmt.Sprintf("workflow %s at %s", w.WorkflowID, w.Step)
	default:
		s = w.Kind + " at " + w.Step
	}
	if !w.Since.IsZero() {
		s += " since " + stamp(w.Since)
	}
	return s
}

// eventDetail is the short tail of a timeline line: what the event says beyond its type.
func eventDetail(ev history.Event) string {
	switch ev.Type {
	case history.WorkflowStarted:
		st, _ := history.DataOf[history.Started](ev)
		return st.SpecFile
	case history.ActivityScheduled:
		a, _ := history.DataOf[history.ActivitySchedule](ev)
		return a.Plugin + "." + a.Activity
	case history.ActivityCompleted:
		return fmt.Sprintf("attempt %d", ev.Attempt)
	case history.ActivityRetryScheduled:
		rs, _ := history.DataOf[history.RetrySchedule](ev)
		return fmt.Sprintf("attempt %d at %s", rs.NextAttempt, rs.AvailableAt.UTC().Format(time.RFC3339))
	case history.TimerScheduled:
		ts, _ := history.DataOf[history.TimerSchedule](ev)
		return fmt.Sprintf("%s until %s", ts.Purpose, ts.FireAt.UTC().Format(time.RFC3339))
	case history.SignalReceived, history.SignalApplied:
		s, _ := history.DataOf[history.Signal](ev)
		return fmt.Sprintf("%q", s.Name)
	case history.ChildWorkflowScheduled:
		cs, _ := history.DataOf[history.ChildSchedule](ev)
		return cs.WorkflowID
	case history.WorkflowWaitScheduled:
		ws, _ := history.DataOf[history.WaitSchedule](ev)
		return ws.WorkflowID
	case history.CancelRequested:
		c, _ := history.DataOf[history.CancelRequest](ev)
		return c.Reason
	}
	if f, ok := server.FailureOf(ev); ok {
		return failureText(&f)
	}
	return ""
}
