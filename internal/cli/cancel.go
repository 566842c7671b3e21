package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/wendflow/wend/history"
)

var cancelCmd = &command{
	summary: "cancel a running workflow",
	usage: `Usage: wend cancel ID [--reason R] [--json] [--db PATH]

Cancels the open run of workflow id ID (or the run with run id ID): open activities and
timers are cancelled, compensations of completed steps run in reverse order, then the
workflow's on_cancel steps, and the run ends with status cancelled ('wend run' following it
exits 3). When another wend process holds the database, the cancel goes through its
control socket.

Flags:
  --reason R   why, recorded in the history (CancelRequested) and the run's failure
  --json       print the run record after the cancel as JSON
  --db PATH    database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 cancel recorded, 1 no such workflow or the run has finished, 2 usage or I/O
error.
`,
	run: runCancel,
}

func runCancel(e *env, args []string) int {
	fs := flag.NewFlagSet("cancel", flag.ContinueOnError)
	reason := fs.String("reason", "", "")
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "cancel", "%s", flagError(err))
	}
	if len(pos) != 1 {
		return usageError(e, "cancel", "want one workflow or run ID, got %d arguments", len(pos))
	}
	b, err := openBackend(e, dbPath(e, *db), steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend cancel: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	run, err := b.Cancel(context.Background(), pos[0], *reason)
	if err != nil {
		return commandError(e, "cancel", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(run, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	if run.Status == history.StatusCancelled {
		fmt.Fprintf(e.stdout, "run %s of %s cancelled\n", run.RunID, printable(run.WorkflowID, ""))
	} else {
		// Compensations or on_cancel steps still have to run.
		fmt.Fprintf(e.stdout, "cancel of run %s of %s recorded; it is %s until its compensations finish\n", run.RunID, printable(run.WorkflowID, ""), run.Status)
	}
	return exitOK
}
