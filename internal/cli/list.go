package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

var listCmd = &command{
	summary: "list runs, newest first",
	usage: `Usage: wend list [--status S] [--workflow ID] [--json] [--db PATH]

Lists the runs in the database, newest first, as a table on stdout: workflow id, run id,
workflow name, status (with the closed reason when it says more, e.g. "failed (timed_out)"),
start and close times in UTC. When another wend process holds the database, the list comes
from it over its control socket.

Flags:
  --status S      only runs with status S: running, completed, failed, cancelled, continued
  --workflow ID   only the runs of workflow id ID (continue-as-new makes several)
  --json          print a JSON array of run records instead (fields: workflow_id, run_id,
                  name, status, closed_reason, spec_file, spec_sha256, parent_run_id,
                  parent_step, started_at, closed_at, last_seq)
  --db PATH       database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 listed (also when no run matches), 1 the database holder refused, 2 usage or
I/O error.
`,
	run: runList,
}

func runList(e *env, args []string) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	status := fs.String("status", "", "")
	workflow := fs.String("workflow", "", "")
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "list", "%s", flagError(err))
	}
	if len(pos) > 0 {
		return usageError(e, "list", "unexpected argument %q", pos[0])
	}
	if err := server.CheckStatus(*status); err != nil {
		return usageError(e, "list", "--status: %v", err)
	}
	b, err := openBackend(dbPath(e, *db), readRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend list: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	runs, err := b.List(history.RunFilter{Status: *status, WorkflowID: *workflow})
	if err != nil {
		return commandError(e, "list", err)
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
	fmt.Fprintln(tw, "WORKFLOW ID\tRUN ID\tNAME\tSTATUS\tSTARTED\tCLOSED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.WorkflowID, r.RunID, r.Name, statusText(r), stamp(r.StartedAt), stamp(r.ClosedAt))
	}
	tw.Flush()
	return exitOK
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
