package cli

import (
	"fmt"

	"github.com/wendflow/wend/history"
)

var cancelCmd = &command{
	summary: "cancel a running workflow",
	usage: `Usage: wend cancel ID [--reason R] [--json] [--db PATH]
       wend cancel --where FILTER [--dry-run | --yes] [--reason R] [--db PATH]

Cancels the open run of workflow id ID (or the run with run id ID): open activities and
timers are cancelled, compensations of completed steps run in reverse order, then the
workflow's on_cancel steps, and the run ends with status cancelled ('wend run' following it
exits 3). When another wend process holds the database, the cancel goes through its
control socket.

Flags:
  --reason R   why, recorded in the history (CancelRequested) and the run's failure
  --json       print the run record after the cancel as JSON
  --db PATH    database file (default $WEND_DB, else .wend/wend.db)
  --where F    act on every open run filter F matches, once each, newest first: clauses
               KEY OP VALUE joined by and, with wend list's filters: status = S,
               workflow = ID, name = NAME, id ^= PREFIX (workflow or run id starts with),
               id ~ TEXT (contains), started >= TIME, started < TIME; a VALUE with spaces
               in "double quotes". E.g. --where 'name = order and started < 2026-01-01'
  --dry-run    with --where: list the matching open runs (WORKFLOW_ID RUN_ID STATUS) and
               do nothing
  --yes        with --where: act (without it, say how many runs match and exit 2)

With --where, a line per run acted on goes to stdout, failures and progress (every 100 runs,
then a summary) to stderr.

Exit codes: 0 cancel recorded (--where: for each run matched, or none matched), 1 no such
workflow or the run has finished (--where: a run failed), 2 usage or I/O error (--where:
runs match and neither --yes nor --dry-run was given).
`,
	run: runCancel,
}

func runCancel(e *env, args []string) int {
	return stopCmd(e, args, "cancel", backend.Cancel, func(run history.Run) string {
		if run.Status == history.StatusCancelled {
			return fmt.Sprintf("run %s of %s cancelled", run.RunID, printable(run.WorkflowID, ""))
		}
		// Compensations or on_cancel steps still have to run.
		return fmt.Sprintf("cancel of run %s of %s recorded; it is %s until its compensations finish", run.RunID, printable(run.WorkflowID, ""), run.Status)
	})
}
