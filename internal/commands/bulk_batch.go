package commands

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/api"
)

// batchPoll is how often a --where command asks serve how its batch goes; a variable so
// tests can shorten it.
var batchPoll = 250 * time.Millisecond

// batchProgressEvery is how often, at most, it prints the batch's progress on stderr.
const batchProgressEvery = 2 * time.Second

// rpsFlag is the --rps flag of the --where commands; checkRPS refuses it without --where or
// out of range.
func rpsFlag(fs *flag.FlagSet) *float64 { return fs.Float64("rps", 0, "") }

func checkRPS(rps float64, bulk bool) string {
	switch {
	case rps != 0 && !bulk:
		return "--rps goes with --where FILTER"
	case rps < 0 || rps > api.MaxBatchRPS:
		return fmt.Sprintf("--rps %g: want a pace in runs a second, above 0 and at most %d", rps, api.MaxBatchRPS)
	}
	return ""
}

// bulkThroughBatch is bulk's path when wend serve holds the database: it sends the filter as
// a batch (POST /v1/batches), which serve runs durably at its pace, and follows it to its
// end. ok is false when the holder runs no batches (wend run holds the file): bulk then acts
// from here, run by run.
func bulkThroughBatch(e *env, c *client, w where, op bulkOp) (code int, ok bool) {
	req := op.batch
	req.Where, req.RPS = w.text, w.rps
	bt, err := c.CreateBatch(context.Background(), req)
	var se *api.Error
	if errors.As(err, &se) && se.Code == api.CodeUnsupported {
		return 0, false
	}
	if err != nil {
		return commandError(e, op.name, err), true
	}
	fmt.Fprintln(e.stdout, bt.ID)
	fmt.Fprintf(e.stderr, "wend %s: batch %s runs in wend pid %d, which holds the database, at %g run(s)/s; "+
		"wend batch show %s follows it, wend batch cancel %s stops it\n", op.name, bt.ID, c.pid, bt.Request.RPS, bt.ID, bt.ID)
	// Ctrl-C stops following, not the batch: serve goes on with it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	last, lastAt := -1, time.Now()
	for bt.Open() {
		select {
		case <-sigs:
			fmt.Fprintf(e.stderr, "wend %s: interrupted; batch %s goes on in wend pid %d (wend batch show %s, wend batch cancel %s)\n",
				op.name, bt.ID, c.pid, bt.ID, bt.ID)
			return exitInterrupted, true
		case <-time.After(batchPoll):
		}
		if bt, err = c.Batch(context.Background(), bt.ID); err != nil {
			return commandError(e, op.name, err), true
		}
		if n := bt.Done + bt.Failed + bt.Skipped; bt.Open() && n != last && time.Since(lastAt) >= batchProgressEvery {
			fmt.Fprintf(e.stderr, "wend %s: %d of %d done\n", op.name, n, bt.Total)
			last, lastAt = n, time.Now()
		}
	}
	return batchSummary(e, op.name, bt), true
}

// batchSummary prints a closed batch's failures and counts on stderr and maps them to the
// exit code: 1 when a run failed or the batch did not complete.
func batchSummary(e *env, name string, bt api.Batch) int {
	for _, f := range bt.Failures {
		fmt.Fprintf(e.stderr, "wend %s: run %s: %s\n", name, termtext.Escape(f.RunID, ""), f.Error)
	}
	if more := bt.Failed - len(bt.Failures); more > 0 {
		fmt.Fprintf(e.stderr, "wend %s: (and %d more failures)\n", name, more)
	}
	fmt.Fprintf(e.stderr, "wend %s: %d of %d run(s) done, %d failed, %d skipped%s\n", name, bt.Done, bt.Total, bt.Failed, bt.Skipped, skippedWhy(bt))
	switch {
	case bt.Status == api.BatchFailed:
		fmt.Fprintf(e.stderr, "wend %s: batch %s failed: %s\n", name, bt.ID, bt.Error)
	case bt.Status == api.BatchCancelled:
		fmt.Fprintf(e.stderr, "wend %s: batch %s was cancelled\n", name, bt.ID)
	case bt.Failed == 0:
		return exitOK
	}
	return exitFailed
}

// skippedWhy says why runs were skipped: " (2 finished, 1 gone)", or "".
func skippedWhy(bt api.Batch) string {
	if len(bt.SkippedBy) == 0 {
		return ""
	}
	s := ""
	for _, why := range slices.Sorted(maps.Keys(bt.SkippedBy)) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", bt.SkippedBy[why], why)
	}
	return " (" + s + ")"
}
