package commands

import (
	"errors"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/server"
)

// where is a parsed --where FILTER (server.ParseWhere): `wend list`'s filters and the
// workflows' search fields, written as clauses joined by and,
//
//	status = running and name = order and id ^= ord- and customer = "ann"
type where struct {
	q    api.ListQuery
	text string  // as given: a batch sends it to serve
	rps  float64 // --rps: runs a second; 0 for the default (a batch's, else no pause)
}

// whereFlagsHelp is the --where, --dry-run and --yes part of the help of the commands that
// act on runs in bulk (cancel, terminate).
const whereFlagsHelp = `  --where F    act on every open run filter F matches, once each, newest first: clauses
               KEY OP VALUE joined by and, with wend list's filters: status = S,
               workflow = ID, name = NAME, id ^= PREFIX (workflow or run id starts with),
               id ~ TEXT (contains), started >= TIME, started < TIME, and the workflows'
               search fields: FIELD = V, != V, and for numbers and times <, <=, >, >=; a
               VALUE with spaces in "double quotes".
               E.g. --where 'name = order and started < 2026-01-01'
  --dry-run    with --where: list the matching open runs (WORKFLOW_ID RUN_ID STATUS) and
               do nothing
  --yes        with --where: act (without it, say how many runs match and exit 2)
  --rps N      with --where: act on at most N runs a second (default 50 through wend serve,
               else as fast as they go; at most 1000)

With --where, a line per run acted on goes to stdout, failures and progress (every 100 runs,
then a summary) to stderr. When wend serve holds the database, serve acts on the runs as a
batch (durable across its restarts, 50 runs/s; wend help batch): the batch's id goes to
stdout, its progress, failures and counts to stderr.
`

// filterError reports a listing's failure: a filter the server refused (a search field no run
// has) is a usage error, exit 2, as a filter refused before the database is opened is.
func filterError(e *env, cmd string, err error) int {
	var se *api.Error
	if errors.As(err, &se) && se.Code == api.CodeBadRequest {
		fmt.Fprintf(e.stderr, "wend %s: %v\n", cmd, err)
		return exitUsage
	}
	return commandError(e, cmd, err)
}

// parseWhere reads a --where FILTER; errors name the clause and what to write.
func parseWhere(s string) (where, error) {
	q, err := server.ParseWhere(s)
	if err != nil {
		return where{}, fmt.Errorf("--where: %w", err)
	}
	return where{q: q, text: s}, nil
}
