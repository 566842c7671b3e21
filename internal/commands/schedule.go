package commands

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
)

var scheduleCmd = &command{
	summary: "list, show, pause, resume, trigger, backfill or delete schedules",
	usage: `Usage: wend schedule list [--json] [--db PATH]
       wend schedule show ID [--json] [--db PATH]
       wend schedule pause ID [--note TEXT] [--db PATH]
       wend schedule resume ID [--note TEXT] [--db PATH]
       wend schedule trigger ID [--overlap POLICY] [--db PATH]
       wend schedule backfill ID FROM TO [--overlap POLICY] [--db PATH]
       wend schedule delete ID [--db PATH]
       wend schedule sync DIR... --temporal HOST:PORT [--prune]

Schedules are declared in workflow files (schedules:, docs/language.md) and fired by
'wend serve --workflows DIR', which records each fire in the database before its run starts.
When serve holds the database these commands go through its control socket; otherwise they
change the database directly, and the fires a trigger or backfill records start when serve
next runs.

  list      every schedule: its workflow, when it fires, overlap, paused, next fire
  show      one schedule with its state and its recent fires
  pause     stop firing; fires due while paused do not run later
  resume    fire again from now
  trigger   fire now, under the schedule's overlap policy or --overlap
  backfill  fire every time of the calendar in [FROM, TO) (RFC 3339 times, e.g.
            2026-03-01T00:00:00Z), oldest first, at most 10,000; each gets the workflow id
            its calendar fire has, so times that fired already start nothing new
  delete    forget the schedule and its state; a file still declaring it brings it back,
            firing from then on, when serve next starts

With --temporal HOST:PORT (and --namespace, --task-queue) the schedules are Temporal
Schedules of the same ids, which the cluster fires: 'wend schedule sync DIR...' creates or
updates them from the files below DIR (run it again after editing a file; a schedule wend
made that no file declares is listed, and deleted with --prune), and the other subcommands
act on them there. Overlap, catchup_window, jitter and paused map to Temporal's own.

A fire's run has workflow id ID-TIME (TIME its nominal time in RFC 3339, UTC): find its runs
with 'wend list --workflow-id ...' or in 'wend schedule show ID'.

Flags:
  --json            print JSON (list, show)
  --note TEXT       why (pause, resume), shown by show
  --overlap POLICY  skip, buffer_one, buffer_all, allow_all, cancel_other or terminate_other
  --db PATH         database file (default $WEND_DB, else .wend/wend.db)
  --temporal H:P    the schedules of a Temporal cluster (with --namespace, --task-queue)
  --prune           sync: delete wend's schedules on the cluster that no file declares

Exit codes: 0 done, 1 no such schedule or the request was refused (a bad range), 2 usage or
I/O error.
`,
	run: runSchedule,
}

func runSchedule(e *env, args []string) int {
	if len(args) == 0 {
		return usageError(e, "schedule", "want a subcommand: list, show, pause, resume, trigger, backfill, delete or sync")
	}
	sub, args := args[0], args[1:]
	want := map[string]int{"list": 0, "show": 1, "pause": 1, "resume": 1, "trigger": 1, "backfill": 3, "delete": 1, "sync": -1}
	n, ok := want[sub]
	if !ok {
		return usageError(e, "schedule", "unknown subcommand %q (want list, show, pause, resume, trigger, backfill, delete or sync)", sub)
	}
	fs := flag.NewFlagSet("schedule "+sub, flag.ContinueOnError)
	db := dbFlag(fs)
	asJSON := fs.Bool("json", false, "")
	note := fs.String("note", "", "")
	overlap := fs.String("overlap", "", "")
	prune := fs.Bool("prune", false, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "schedule", "%s", flagError(err))
	}
	switch {
	case sub == "sync" && e.temporal == nil:
		return usageError(e, "schedule", "sync puts the schedules of workflow files on a Temporal cluster: give --temporal HOST:PORT (locally, wend serve --workflows DIR fires them)")
	case sub == "sync" && len(pos) == 0:
		return usageError(e, "schedule", "sync wants the folders of the workflow files (DIR...)")
	case n >= 0 && len(pos) != n:
		return usageError(e, "schedule", "%s wants %d argument(s), got %d", sub, n, len(pos))
	}
	o, err := overlapFlag(*overlap)
	if err != nil {
		return usageError(e, "schedule", "--overlap: %v", err)
	}
	var from, to time.Time
	if sub == "backfill" {
		if from, err = time.Parse(time.RFC3339, pos[1]); err != nil {
			return usageError(e, "schedule", "backfill FROM %q: want an RFC 3339 time such as 2026-03-01T00:00:00Z", pos[1])
		}
		if to, err = time.Parse(time.RFC3339, pos[2]); err != nil {
			return usageError(e, "schedule", "backfill TO %q: want an RFC 3339 time such as 2026-03-02T00:00:00Z", pos[2])
		}
	}
	var ops scheduleOps
	if e.temporal != nil {
		ops, err = clusterSchedules(e)
	} else {
		ops, err = openScheduleOps(dbPath(e, *db))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "wend schedule: %v\n", err)
		return exitUsage
	}
	defer ops.Close()
	switch sub {
	case "list":
		vs, err := ops.List()
		if err != nil {
			return scheduleError(e, err)
		}
		if *asJSON {
			return printScheduleJSON(e, vs)
		}
		printSchedules(e, vs)
	case "show":
		v, err := ops.Show(pos[0])
		if err != nil {
			return scheduleError(e, err)
		}
		if *asJSON {
			return printScheduleJSON(e, v)
		}
		printSchedule(e, v)
	case "pause", "resume":
		op := ops.Pause
		if sub == "resume" {
			op = ops.Resume
		}
		v, err := op(pos[0], *note)
		if err != nil {
			return scheduleError(e, err)
		}
		fmt.Fprintf(e.stdout, "schedule %s %s\n", v.ID, map[bool]string{true: "paused", false: "resumed"}[v.Paused])
	case "trigger":
		f, err := ops.Trigger(pos[0], o)
		if err != nil {
			return scheduleError(e, err)
		}
		fmt.Fprintf(e.stdout, "schedule %s fired: %s (%s)\n", pos[0], f.WorkflowID, fireResult(ops, pos[0], f.WorkflowID))
	case "backfill":
		n, err := ops.Backfill(pos[0], from, to, o)
		if err != nil {
			return scheduleError(e, err)
		}
		fmt.Fprintf(e.stdout, "schedule %s: %d fire(s) recorded between %s and %s\n", pos[0], n, pos[1], pos[2])
	case "delete":
		if err := ops.Delete(pos[0]); err != nil {
			return scheduleError(e, err)
		}
		fmt.Fprintf(e.stdout, "schedule %s deleted\n", pos[0])
	case "sync":
		return syncSchedules(e, ops, pos, *prune)
	}
	return exitOK
}

func overlapFlag(s string) (schedule.Overlap, error) {
	if s == "" {
		return "", nil
	}
	return schedule.ParseOverlap(s)
}

// fireResult is what the overlap policy made of a fire: started, buffered or skipped.
func fireResult(ops scheduleOps, id, workflowID string) string {
	v, err := ops.Show(id)
	if err != nil {
		return "recorded"
	}
	for i := len(v.State.Recent) - 1; i >= 0; i-- {
		if o := v.State.Recent[i]; o.WorkflowID == workflowID {
			return o.Result
		}
	}
	return "recorded"
}

// scheduleError maps a schedule error to its exit code: refusals 1, the rest 2.
func scheduleError(e *env, err error) int {
	if errors.Is(err, runner.ErrNotFound) || errors.Is(err, schedule.ErrBadRequest) {
		fmt.Fprintf(e.stderr, "wend schedule: %v\n", err)
		return exitFailed
	}
	var se *api.Error
	if errors.As(err, &se) && se.Code == api.CodeUnsupported {
		fmt.Fprintf(e.stderr, "wend schedule: %v\n", err)
		return exitUsage
	}
	return commandError(e, "schedule", err)
}

func printScheduleJSON(e *env, v any) int {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(e.stdout, "%s\n", b)
	return exitOK
}

func when(v runner.View) string {
	w := v.Cron
	if w == "" {
		w = "every " + v.Every
	}
	if v.Timezone != "" {
		w += " " + v.Timezone
	}
	return w
}

func printSchedules(e *env, vs []runner.View) {
	if len(vs) == 0 {
		fmt.Fprintln(e.stdout, "no schedules (declare them in a workflow file and run wend serve --workflows DIR)")
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tWHEN\tOVERLAP\tSTATE\tNEXT FIRE")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Escape(v.ID, ""), termtext.Escape(v.Workflow, ""), termtext.Escape(when(v), ""), v.Overlap, state(v), fmtTime(v.NextFire))
	}
	tw.Flush()
}

func state(v runner.View) string {
	switch {
	case !v.Declared:
		return "not declared"
	case v.Paused:
		return "paused"
	}
	return "active"
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func printSchedule(e *env, v runner.View) {
	p := func(k, val string) { fmt.Fprintf(e.stdout, "%-15s %s\n", k+":", val) }
	p("schedule", termtext.Escape(v.ID, ""))
	p("workflow", termtext.Escape(v.Workflow, "")+" ("+termtext.Escape(v.File, "")+")")
	p("when", termtext.Escape(when(v), ""))
	if v.Jitter != "" {
		p("jitter", v.Jitter)
	}
	p("overlap", v.Overlap)
	if v.CatchupWindow != "" {
		p("catchup window", v.CatchupWindow)
	}
	p("state", state(v))
	if v.State.Note != "" {
		p("note", termtext.Escape(v.State.Note, ""))
	}
	p("next fire", fmtTime(v.NextFire))
	c := v.State.Counts
	p("fires", fmt.Sprintf("%d started, %d skipped, %d missed", c.Started, c.Skipped, c.Missed))
	if len(v.State.Open) > 0 {
		p("open runs", strings.Join(v.State.Open, ", "))
	}
	if n := v.BufferedCount; n > 0 {
		p("buffered", fmt.Sprintf("%d fire(s)", n))
	}
	if n := len(v.State.Starting); n > 0 {
		p("to start", fmt.Sprintf("%d fire(s) (recorded; wend serve starts them)", n))
	}
	if len(v.State.Recent) > 0 {
		fmt.Fprintln(e.stdout, "recent fires:")
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, o := range v.State.Recent {
			kind := o.Kind
			if kind == "" {
				kind = "calendar"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", fmtTime(o.Nominal), o.Result, kind, termtext.Escape(o.WorkflowID, ""))
		}
		tw.Flush()
	}
}
