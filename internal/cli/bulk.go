package cli

import (
	"context"
	"fmt"

	"github.com/wendflow/wend/history"
)

// bulkProgressEvery is how often a bulk operation reports its progress on stderr, in runs.
const bulkProgressEvery = 100

// bulkStop runs wend cancel or terminate --where: the open runs the filter matches, each
// once, in list order (newest first). Without --yes it only says how many it would act on;
// with --dry-run it lists them. Results go to stdout (one line per run, as the single-run
// command says them), progress and failures to stderr.
func bulkStop(e *env, b backend, name string, w where, dryRun, yes bool, reason string,
	stop func(b backend, ctx context.Context, id, reason string) (history.Run, error), say func(history.Run) string) int {
	runs, err := b.List(w.q, 0)
	if err != nil {
		return commandError(e, name, err)
	}
	var open []history.Run
	for _, r := range w.match(runs) {
		if r.Open() {
			open = append(open, r)
		}
	}
	closed := len(w.match(runs)) - len(open)
	fmt.Fprintf(e.stderr, "wend %s: %d open run(s) match (%d finished ones skipped)\n", name, len(open), closed)
	if dryRun {
		for _, r := range open {
			fmt.Fprintf(e.stdout, "%s %s %s\n", printable(r.WorkflowID, ""), printable(r.RunID, ""), r.Status)
		}
		return exitOK
	}
	if len(open) == 0 {
		return exitOK
	}
	if !yes {
		return usageError(e, name, "give --yes to %s these %d run(s), or --dry-run to list them", name, len(open))
	}
	failed := 0
	for i, r := range open {
		done, err := stop(b, context.Background(), r.RunID, reason)
		if err != nil {
			failed++
			fmt.Fprintf(e.stderr, "wend %s: run %s of %s: %v\n", name, r.RunID, printable(r.WorkflowID, ""), err)
		} else {
			fmt.Fprintln(e.stdout, say(done))
		}
		if (i+1)%bulkProgressEvery == 0 && i+1 < len(open) {
			fmt.Fprintf(e.stderr, "wend %s: %d of %d done\n", name, i+1, len(open))
		}
	}
	fmt.Fprintf(e.stderr, "wend %s: %d of %d run(s) done, %d failed\n", name, len(open)-failed, len(open), failed)
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}
