package commands

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
)

var showCmd = &command{
	summary: "show a run: status, timeline, attempts, failures, current waits",
	usage: `Usage: wend show ID [--json] [--db PATH]

Shows the newest run of workflow id ID (or the run with run id ID) for a person, with the
same facts as its history export ('wend history ID --json'): the run's header (ids,
status, spec, times, timeouts, input, output or failure, cancel reason); the timeline, one
line per event; each activity with its attempts, their errors and retry schedule; every
failure with its category, propagation kind and a NON-RETRYABLE mark; pending timers and
signals no step has taken, with their data; children, compensations and the operator
metrics; then the run's current public state (from a replay of its history) and its search
field values (docs/language.md, Search fields). For an open
run it ends with what the run is waiting for now (activities in flight or backing off
before a retry, timers, signal waits, child workflows and awaited workflows).

Flags:
  --json      print the run detail as one JSON object (not the export; for that use
              'wend history ID --json'): run, input, output, failure,
              state (the public state; state_error when it cannot be replayed),
              waits[] (kind: activity, timer, signal, child_workflow, workflow; step, since,
              until, activity, attempt, signal, workflow_id...), pending_signals[],
              failures[] (seq, type, time, failure) and events[] (the full history)
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 shown, 1 no such workflow or run, 2 usage or I/O error (or a history this
build cannot read; --json still prints its events).
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
	b, err := openBackend(e, dbPath(e, *db), readRuns)
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
	if d.Run.NeverStarted() {
		fmt.Fprint(e.stdout, termtext.Escape(unstartedText(d), "\n\t"))
		return exitOK
	}
	// The export is a function of the record and events, so building it here from the detail
	// gives what 'wend history' gets from the server, and the waits below come from the same
	// snapshot of the history.
	doc, err := export.Build(printableRun(d.Run), d.Events)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend show: run %s: %v (wend show --json prints its events as stored)\n", d.Run.RunID, err)
		return exitUsage
	}
	printableWorkflow(&doc.Workflow)
	// Rendered whole, then made printable: ids, messages and data in the history reach the
	// terminal as text, whatever an older database or a plugin put there.
	var out strings.Builder
	if err := export.RenderNamed(&out, doc, docStepIDs(doc)); err != nil {
		fmt.Fprintf(e.stderr, "wend show: %v\n", err)
		return exitUsage
	}
	printState(&out, d)
	printSearch(&out, d.Run)
	printWaits(&out, d)
	fmt.Fprint(e.stdout, termtext.Escape(out.String(), "\n\t"))
	return exitOK
}

// printState adds the run's current public state, which only a replay knows (the export
// holds events, and `set` steps record none).
func printState(w io.Writer, d runview.Detail) {
	switch {
	case d.State != nil:
		fmt.Fprintf(w, "\nstate\n  %s\n", runview.Clip(string(d.State), 2000))
	case d.StateError != "":
		fmt.Fprintf(w, "\nstate\n  unknown: %s\n", d.StateError)
	}
}

// printSearch adds the run's search field values (its record's, as wend list --where filters
// by them), by name, and why a field has none.
func printSearch(w io.Writer, r history.Run) {
	if len(r.Search) == 0 && len(r.SearchProblems) == 0 {
		return
	}
	fmt.Fprintln(w, "\nsearch")
	names := slices.Sorted(maps.Keys(r.Search))
	for _, n := range names {
		v, _ := json.Marshal(r.Search[n])
		fmt.Fprintf(w, "  %s = %s\n", n, v)
	}
	for _, n := range slices.Sorted(maps.Keys(r.SearchProblems)) {
		fmt.Fprintf(w, "  %s: no value: %s\n", n, r.SearchProblems[n])
	}
}

// printWaits adds what the export cannot say: what an open run waits for now. Signal waits
// leave no event, so only a replay (runview's Live) finds them.
func printWaits(w io.Writer, d runview.Detail) {
	if !d.Run.Open() {
		return
	}
	fmt.Fprintln(w, "\nwaiting for")
	if len(d.Waits) == 0 {
		fmt.Fprintln(w, "  nothing the history shows (an engine has to drive the run: wend resume)")
	}
	for _, wt := range d.Waits {
		fmt.Fprintf(w, "  %s\n", runview.WaitText(wt, runview.StepNamer(d)))
	}
}

// printableWorkflow escapes the identity the export took from the history (whose
// WorkflowStarted names the run too), newlines included, as printableRun does the record's.
func printableWorkflow(w *export.Workflow) {
	for _, f := range []*string{&w.WorkflowID, &w.RunID, &w.Name, &w.SpecFile, &w.ParentRunID, &w.ParentStep} {
		*f = termtext.Escape(*f, "")
	}
}

// printableRun escapes the record's words for a terminal (see printable), newlines included:
// each heads a line of its own in show's text.
func printableRun(r history.Run) history.Run {
	for _, f := range []*string{&r.WorkflowID, &r.RunID, &r.Name, &r.SpecFile, &r.ParentRunID, &r.ParentStep} {
		*f = termtext.Escape(*f, "")
	}
	return r
}
