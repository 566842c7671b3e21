package commands

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

var listCmd = &command{
	summary: "list runs, newest first",
	usage: `Usage: wend list [--status S] [--workflow ID] [--name NAME] [--q TEXT]
                 [--started-after TIME] [--started-before TIME] [--where FILTER]
                 [--limit N] [--json] [--db PATH]

Lists the runs in the database, newest first (by start time, then run id), as a table on
stdout: workflow id, run id, workflow name, status (with the closed reason when it says more,
e.g. "failed (timed_out)"), start and close times in UTC. When another wend process holds the
database, the list comes from it over its control socket, with the same results.

The filters are GET /v1/runs's (docs/api.md) and combine with AND; an empty value filters
nothing.

Flags:
  --status S             only runs with status S: running, completed, failed, cancelled,
                         continued, queued (waiting under a concurrency key)
  --workflow ID          only the runs of workflow id ID (continue-as-new makes several)
  --name NAME            only runs of the workflow named NAME (the spec's name:), exact
  --q TEXT               only runs whose workflow id or run id contains TEXT, in any case
                         (at most 256 bytes)
  --started-after TIME   only runs started at or after TIME, an RFC 3339 time with a zone
                         like 2024-05-01T12:00:00Z, or a date like 2024-05-01 (its start,
                         00:00 UTC)
  --started-before TIME  only runs started strictly before TIME (so adjacent ranges never
                         share a run); must be later than --started-after
  --where FILTER         clauses KEY OP VALUE joined by and: the filters above as
                         status = S, workflow = ID, name = NAME, id ~ TEXT,
                         started >= TIME, started < TIME, and id ^= PREFIX (workflow or run
                         id starts with), and the workflows' search fields (docs/language.md,
                         Search fields): FIELD = V, FIELD != V, and for numbers and times
                         <, <=, >, >=; a VALUE with spaces in "double quotes". E.g.
                         --where 'customer = "ann" and status = failed'
  --limit N              at most N runs, the newest (default all)
  --json                 print a JSON array of run records instead, [] for none (fields:
                         workflow_id, run_id, name, status, closed_reason, spec_file,
                         spec_sha256, parent_run_id, parent_step, started_at, closed_at,
                         last_seq, search, search_problems)
  --db PATH              database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 listed (also when no run matches), 1 the database holder refused, 2 usage or
I/O error.
`,
	run: runList,
}

func runList(e *env, args []string) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	var f listFlags
	fs.StringVar(&f.q.Status, "status", "", "")
	fs.StringVar(&f.q.WorkflowID, "workflow", "", "")
	fs.StringVar(&f.q.Name, "name", "", "")
	fs.StringVar(&f.q.Q, "q", "", "")
	fs.StringVar(&f.after, "started-after", "", "")
	fs.StringVar(&f.before, "started-before", "", "")
	fs.StringVar(&f.limit, "limit", "", "")
	fs.StringVar(&f.where, "where", "", "")
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "list", "%s", flagError(err))
	}
	if len(pos) > 0 {
		return usageError(e, "list", "unexpected argument %q", pos[0])
	}
	q, limit, err := f.query()
	if err != nil {
		return usageError(e, "list", "%v", err)
	}
	b, err := openBackend(e, dbPath(e, *db), readRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend list: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	runs, err := b.List(q, limit)
	if err != nil {
		return filterError(e, "list", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(runs, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	if len(runs) == 0 {
		fmt.Fprintln(e.stderr, "no runs")
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	color := e.colorOn(e.stdout)
	fmt.Fprintf(tw, "WORKFLOW ID\tRUN ID\tNAME\t%s\tSTARTED (UTC)\tCLOSED (UTC)\n", paint(color, ansiDefault, "STATUS"))
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Escape(r.WorkflowID, ""), termtext.Escape(r.RunID, ""), termtext.Escape(r.Name, ""),
			paint(color, statusColor(r.Status), termtext.Escape(statusText(r), "")), stamp(r.StartedAt), stamp(r.ClosedAt))
	}
	tw.Flush()
	return exitOK
}

// listFlags are `wend list`'s filter flags as given: the string filters straight in q, the
// times and the limit still to check.
type listFlags struct {
	q                    api.ListQuery
	after, before, limit string
	where                string
}

// query checks the flags as GET /v1/runs checks its parameters (server.ParseListQuery), with
// the flags' names in the messages, and returns the filters and the most runs to list (0:
// all). Checking here keeps a held database from refusing what a local list would take.
func (f listFlags) query() (api.ListQuery, int, error) {
	q := f.q
	if err := server.CheckStatus(q.Status); err != nil {
		return q, 0, fmt.Errorf("--status: %w", err)
	}
	if len(q.Q) > api.MaxListQuery {
		return q, 0, fmt.Errorf("--q: %d bytes long, more than %d", len(q.Q), api.MaxListQuery)
	}
	var err error
	if q.StartedAfter, err = listTime("--started-after", f.after); err != nil {
		return q, 0, err
	}
	if q.StartedBefore, err = listTime("--started-before", f.before); err != nil {
		return q, 0, err
	}
	if !q.StartedAfter.IsZero() && !q.StartedBefore.IsZero() && !q.StartedAfter.Before(q.StartedBefore) {
		return q, 0, fmt.Errorf("--started-after (%s) must be earlier than --started-before (%s)", f.after, f.before)
	}
	if f.where != "" {
		w, err := parseWhere(f.where)
		if err != nil {
			return q, 0, err
		}
		if err := q.MergeWhere(w.q); err != nil {
			return q, 0, fmt.Errorf("--where: %w", err)
		}
	}
	limit := 0
	if f.limit != "" {
		if limit, err = strconv.Atoi(f.limit); err != nil || limit < 1 {
			return q, 0, fmt.Errorf("--limit: %q must be a whole number, at least 1", f.limit)
		}
	}
	return q, limit, nil
}

// statusText is a run's status, with the closed reason when that says more.
func statusText(r history.Run) string {
	if r.ClosedReason != "" && r.ClosedReason != r.Status {
		return r.Status + " (" + r.ClosedReason + ")"
	}
	return r.Status
}

// stamp formats a time for tables: UTC to the second, "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}
