package commands

import (
	"errors"
	"flag"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/server"
)

var queryCmd = &command{
	summary: "evaluate an expression over a run's input, state and step outputs (read only)",
	usage: `Usage: wend query ID EXPR [--db PATH]

Evaluates EXPR, an expression in the workflow language (expr-lang, as inside ${{ }}), over
the newest run of workflow id ID (or the run with run id ID), open or closed, and prints its
value as one line of JSON. The expression sees what the workflow's top-level expressions
see now: input, state (the run's public state), steps.ID.output (every step with an id that
has completed outside a for_each body) and run ({workflow_id, run_id}). Nothing is recorded:
the run is replayed from its history and left as it was. For scripts:

  wend query order-42 'state.approved_by ?? ""'
  wend query order-42 'steps.charge.output.amount > 100'

EXPR has the limits of any expression (4 KiB, 1,000 nodes, a memory budget) and the same
refusals (now(), repeat, replace; date() without a zone).

Flags:
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 printed, 1 no such workflow or run, or the run cannot answer EXPR (a step
output it has not recorded, an evaluation error), 2 usage or I/O error (EXPR that does not
compile or is over a limit included).
`,
	run: runQuery,
}

func runQuery(e *env, args []string) int {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "query", "%s", flagError(err))
	}
	if len(pos) != 2 {
		return usageError(e, "query", "want a workflow or run ID and an expression, got %d arguments", len(pos))
	}
	// Before any database is opened: a typo is the command line's fault, whatever the run.
	if err := server.CheckQuery(pos[1]); err != nil {
		fmt.Fprintf(e.stderr, "wend query: %v\n", err)
		return exitUsage
	}
	b, err := openBackend(e, dbPath(e, *db), readRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend query: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	res, err := b.Query(pos[0], pos[1])
	if err != nil {
		var se *api.Error
		if errors.As(err, &se) && se.Code == api.CodeBadQuery {
			fmt.Fprintf(e.stderr, "wend query: %v\n", err)
			return exitUsage
		}
		return commandError(e, "query", err)
	}
	fmt.Fprintf(e.stdout, "%s\n", res.Value)
	return exitOK
}
