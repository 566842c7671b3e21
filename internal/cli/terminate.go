package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
)

var terminateCmd = &command{
	summary: "stop a running workflow at once, without compensation",
	usage: `Usage: wend terminate ID [--reason R] [--json] [--db PATH]

Stops the open run of workflow id ID (or the run with run id ID) at once: activity calls in
flight are cancelled and timers dropped, but unlike 'wend cancel' no compensation and no
on_cancel step runs, so whatever the run did stays done. The run ends with status cancelled
and closed_reason terminated; its failure has category terminated ('wend run' following it
exits 3). Use it for a run whose compensations would do harm or cannot finish. When
another wend process holds the database, the terminate goes through its control socket.

Flags:
  --reason R   why, recorded in the history (TerminateRequested) and the run's failure
  --json       print the run record after the terminate as JSON
  --db PATH    database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 terminated, 1 no such workflow or the run has finished, 2 usage or I/O error.
`,
	run: runTerminate,
}

func runTerminate(e *env, args []string) int {
	fs := flag.NewFlagSet("terminate", flag.ContinueOnError)
	reason := fs.String("reason", "", "")
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "terminate", "%s", flagError(err))
	}
	if len(pos) != 1 {
		return usageError(e, "terminate", "want one workflow or run ID, got %d arguments", len(pos))
	}
	b, err := openBackend(e, dbPath(e, *db), steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend terminate: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	run, err := b.Terminate(context.Background(), pos[0], *reason)
	if err != nil {
		return commandError(e, "terminate", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(run, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "run %s of %s terminated\n", run.RunID, printable(run.WorkflowID, ""))
	return exitOK
}
