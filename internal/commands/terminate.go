package commands

import (
	"fmt"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/history"
)

var terminateCmd = &command{
	summary: "stop a running workflow at once, without compensation",
	usage: `Usage: wend terminate ID [--reason R] [--json] [--db PATH]
       wend terminate --where FILTER [--dry-run | --yes] [--rps N] [--reason R] [--db PATH]

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
` + whereFlagsHelp + `
Exit codes: 0 terminated (--where: each run matched, or none matched), 1 no such workflow or
the run has finished (--where: a run failed), 2 usage or I/O error (--where: runs match and
neither --yes nor --dry-run was given).
`,
	run: runTerminate,
}

func runTerminate(e *env, args []string) int {
	return stopCmd(e, args, "terminate", backend.Terminate, func(run history.Run) string {
		return fmt.Sprintf("run %s of %s terminated", run.RunID, termtext.Escape(run.WorkflowID, ""))
	})
}
