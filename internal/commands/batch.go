package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/termtext"
)

var batchCmd = &command{
	summary: "list, show or cancel the batches wend serve runs",
	usage: `Usage: wend batch list [--json] [--db PATH]
       wend batch show ID [--json] [--db PATH]
       wend batch cancel ID [--db PATH]

A batch is one operation (cancel, terminate, signal, retry, purge, migrate) over many runs,
run by wend serve: 'wend cancel|terminate|signal|retry|migrate --where F --yes' sends one when serve holds
the database, as does POST /v1/batches. Serve fixes its runs when it accepts it, acts on
them one at a time at its pace (50 runs/s unless the request says), and keeps its progress
in the database: after a restart, even a crash, it goes on where it was and acts on no run
twice. These commands reach serve through its control socket. With --temporal ADDR they
read and stop the namespace's batch operations, which wend serve --temporal starts.

  list     every batch kept (the last 1,000 finished ones, and the running ones), newest
           first: ID, OPERATION, STATUS, done/total, failed, skipped, created
  show     one batch: its request, counts, and the first 100 failures with their reasons
  cancel   stop a running batch after the run it acts on; the rest are left as they are

Flags:
  --json      print JSON (list, show)
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 done, 1 no such batch, 2 usage or I/O error (serve does not hold the database).
`,
	run: runBatch,
}

func runBatch(e *env, args []string) int {
	if len(args) == 0 {
		return usageError(e, "batch", "want a subcommand: list, show or cancel")
	}
	sub, args := args[0], args[1:]
	want := map[string]int{"list": 0, "show": 1, "cancel": 1}
	n, ok := want[sub]
	if !ok {
		return usageError(e, "batch", "unknown subcommand %q (want list, show or cancel)", sub)
	}
	fs := flag.NewFlagSet("batch "+sub, flag.ContinueOnError)
	db := dbFlag(fs)
	asJSON := fs.Bool("json", false, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "batch", "%s", flagError(err))
	}
	if len(pos) != n {
		return usageError(e, "batch", "%s wants %d argument(s), got %d", sub, n, len(pos))
	}
	if e.temporal != nil {
		id := ""
		if n == 1 {
			id = pos[0]
		}
		return batchOnCluster(e, sub, id, *asJSON)
	}
	path := dbPath(e, *db)
	c := liveHolder(path)
	if c == nil {
		fmt.Fprintf(e.stderr, "wend batch: no wend serve holds %s: batches are run by wend serve; start it, then try again\n", path)
		return exitUsage
	}
	defer c.Close()
	ctx := context.Background()
	switch sub {
	case "list":
		bs, err := c.Batches(ctx)
		if err != nil {
			return commandError(e, "batch", err)
		}
		if *asJSON {
			return printBatchJSON(e, bs)
		}
		printBatches(e, bs)
		return exitOK
	case "show":
		bt, err := c.Batch(ctx, pos[0])
		if err != nil {
			return commandError(e, "batch", err)
		}
		if *asJSON {
			return printBatchJSON(e, bt)
		}
		printBatch(e, bt)
		return exitOK
	}
	bt, err := c.CancelBatch(ctx, pos[0])
	if err != nil {
		return commandError(e, "batch", err)
	}
	fmt.Fprintf(e.stdout, "batch %s is %s: %d of %d run(s) acted on\n", bt.ID, bt.Status, bt.Done+bt.Failed+bt.Skipped, bt.Total)
	return exitOK
}

func printBatchJSON(e *env, v any) int {
	out, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(e.stdout, "%s\n", out)
	return exitOK
}

func printBatches(e *env, bs []api.Batch) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOPERATION\tSTATUS\tDONE\tFAILED\tSKIPPED\tCREATED")
	for _, bt := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%s\n", termtext.Escape(bt.ID, ""), bt.Request.Operation, bt.Status,
			bt.Done, bt.Total, bt.Failed, bt.Skipped, bt.CreatedAt.Local().Format(time.DateTime))
	}
	tw.Flush()
}

func printBatch(e *env, bt api.Batch) {
	w := e.stdout
	fmt.Fprintf(w, "batch      %s\n", termtext.Escape(bt.ID, ""))
	fmt.Fprintf(w, "operation  %s\n", bt.Request.Operation)
	if bt.Request.Where != "" {
		fmt.Fprintf(w, "where      %s\n", termtext.Escape(bt.Request.Where, ""))
	}
	if bt.Request.Signal != nil {
		fmt.Fprintf(w, "signal     %s %s\n", termtext.Escape(bt.Request.Signal.Name, ""), bt.Request.Signal.Data)
	}
	if m := bt.Request.Migrate; m != nil {
		fmt.Fprintf(w, "to         %s (file version %s)\n", termtext.Escape(m.File, ""), shortSHA(history.SpecSHA256([]byte(m.Source))))
	}
	if bt.Request.Reason != "" {
		fmt.Fprintf(w, "reason     %s\n", termtext.Escape(bt.Request.Reason, ""))
	}
	fmt.Fprintf(w, "status     %s\n", bt.Status)
	fmt.Fprintf(w, "runs       %d matched, %d to act on at %g/s: %d done, %d failed, %d skipped%s\n",
		bt.Matched, bt.Total, bt.Request.RPS, bt.Done, bt.Failed, bt.Skipped, skippedWhy(bt))
	fmt.Fprintf(w, "created    %s\n", bt.CreatedAt.Local().Format(time.RFC3339))
	if !bt.ClosedAt.IsZero() {
		fmt.Fprintf(w, "closed     %s\n", bt.ClosedAt.Local().Format(time.RFC3339))
	}
	if bt.Error != "" {
		fmt.Fprintf(w, "error      %s\n", bt.Error)
	}
	for _, f := range bt.Failures {
		fmt.Fprintf(w, "failed     %s: %s\n", termtext.Escape(f.RunID, ""), f.Error)
	}
}
