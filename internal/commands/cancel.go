package commands

import (
	"fmt"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/history"
)

var cancelCmd = &command{
	summary: "cancel a running workflow",
	usage: `Usage: wend cancel ID [--reason R] [--json] [--db PATH]
       wend cancel --where FILTER [--dry-run | --yes] [--rps N] [--reason R] [--db PATH]

Cancels the open run of workflow id ID (or the run with run id ID): open activities and
timers are cancelled, compensations of completed steps run in reverse order, then the
workflow's on_cancel steps, and the run ends with status cancelled ('wend run' following it
exits 3). When another wend process holds the database, the cancel goes through its
control socket.

Flags:
  --reason R   why, recorded in the history (CancelRequested) and the run's failure
  --json       print the run record after the cancel as JSON
  --db PATH    database file (default $WEND_DB, else .wend/wend.db)
` + whereFlagsHelp + `
Exit codes: 0 cancel recorded (--where: for each run matched, or none matched), 1 no such
workflow or the run has finished (--where: a run failed), 2 usage or I/O error (--where:
runs match and neither --yes nor --dry-run was given).
`,
	run: runCancel,
}

func runCancel(e *env, args []string) int {
	return stopCmd(e, args, "cancel", backend.Cancel, func(run history.Run) string {
		if run.Status == history.StatusCancelled {
			return fmt.Sprintf("run %s of %s cancelled", run.RunID, termtext.Escape(run.WorkflowID, ""))
		}
		// Compensations or on_cancel steps still have to run.
		return fmt.Sprintf("cancel of run %s of %s recorded; it is %s until its compensations finish", run.RunID, termtext.Escape(run.WorkflowID, ""), run.Status)
	})
}
