package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/history"
)

// bulkProgressEvery is how often a bulk operation reports its progress on stderr, in runs.
const bulkProgressEvery = 100

// bulkOp is what a --where command does to each run it matches.
type bulkOp struct {
	name     string                              // the command: cancel, terminate, retry
	eligible func(history.Run) bool              // the runs it can act on
	skipped  string                              // what the others are, for the count: "finished"
	act      func(r history.Run) (string, error) // acts on r; the line for stdout
	// batch is the operation as a batch of wend serve (bulk_batch.go); its Operation is ""
	// for an op that has none.
	batch api.BatchRequest
}

// bulkStop is the bulkOp of wend cancel and terminate: the open runs.
func bulkStop(e *env, b backend, name string, w where, dryRun, yes bool, reason string,
	stop func(b backend, ctx context.Context, id, reason string) (history.Run, error), say func(history.Run) string) int {
	return bulk(e, b, w, dryRun, yes, bulkOp{name: name, eligible: history.Run.Open, skipped: "finished",
		batch: api.BatchRequest{Operation: name, Reason: reason},
		act: func(r history.Run) (string, error) {
			done, err := stop(b, context.Background(), r.RunID, reason)
			if err != nil {
				return "", err
			}
			return say(done), nil
		}})
}

// bulk runs a --where command: the eligible runs the filter matches, each once, in list order
// (newest first). Without --yes it only says how many it would act on; with --dry-run it lists
// them. Results go to stdout (one line per run, as the single-run command says them),
// progress and failures to stderr.
func bulk(e *env, b backend, w where, dryRun, yes bool, op bulkOp) int {
	name := op.name
	runs, err := b.List(w.q, 0)
	if err != nil {
		return filterError(e, name, err)
	}
	matched := runs
	var todo []history.Run
	for _, r := range matched {
		if op.eligible(r) {
			todo = append(todo, r)
		}
	}
	fmt.Fprintf(e.stderr, "wend %s: %d run(s) to %s match (%d %s ones skipped)\n", name, len(todo), name, len(matched)-len(todo), op.skipped)
	if dryRun {
		for _, r := range todo {
			fmt.Fprintf(e.stdout, "%s %s %s\n", termtext.Escape(r.WorkflowID, ""), termtext.Escape(r.RunID, ""), r.Status)
		}
		return exitOK
	}
	if len(todo) == 0 {
		return exitOK
	}
	if !yes {
		return needYes(e, name, len(todo))
	}
	if c, ok := b.(*client); ok && op.batch.Operation != "" {
		if code, ok := bulkThroughBatch(e, c, w, op); ok {
			return code
		}
	}
	failed := 0
	var pace <-chan time.Time
	if w.rps > 0 {
		tick := time.NewTicker(time.Duration(float64(time.Second) / w.rps))
		defer tick.Stop()
		pace = tick.C
	}
	for i, r := range todo {
		if pace != nil && i > 0 {
			<-pace
		}
		line, err := op.act(r)
		if err != nil {
			failed++
			fmt.Fprintf(e.stderr, "wend %s: run %s of %s: %v\n", name, r.RunID, termtext.Escape(r.WorkflowID, ""), err)
		} else {
			fmt.Fprintln(e.stdout, line)
		}
		if (i+1)%bulkProgressEvery == 0 && i+1 < len(todo) {
			fmt.Fprintf(e.stderr, "wend %s: %d of %d done\n", name, i+1, len(todo))
		}
	}
	fmt.Fprintf(e.stderr, "wend %s: %d of %d run(s) done, %d failed\n", name, len(todo)-failed, len(todo), failed)
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}

// needYes refuses to act on n runs without --yes: the confirmation of every --where command.
func needYes(e *env, name string, n int) int {
	return usageError(e, name, "give --yes to %s these %d run(s), or --dry-run to list them", name, n)
}
