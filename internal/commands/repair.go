package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
)

var repairCmd = &command{
	summary: "rebuild the lost tasks of stuck runs from their history",
	usage: `Usage: wend repair [ID] [--json] [--db PATH]

Compares what the history of each open run says must be pending (activities, retries,
timers, child starts) with the tasks the database holds, and recreates the missing ones,
recording RepairRequested in the run's history. With ID, only the open run of that
workflow id (or run id) is examined. It never touches a task that exists, so an activity
that is running is never started twice. Without ID it also rebuilds the database's indexes
(a run's workflow, its search values) from the run records. Healthy runs print "nothing
to repair".

A 'wend serve' does the same on its own every minute. When another wend process holds the
database, the repair runs there and the rebuilt tasks run at once; otherwise they run when
a wend process next drives the database (wend resume, wend serve).

Output: one line per index entry put right ("search index: put run "RUN-ID", FIELD =
VALUE", ...), one per rebuilt task ("RUN-ID: TASK-ID"), or "nothing to repair (N open runs
examined)".

Flags:
  --json      print {"runs": open runs examined, "rebuilt": ["RUN-ID: TASK-ID", ...],
              "indexes": [index lines, when any]}
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 repaired or nothing to repair, 1 no such workflow or run, 2 usage or I/O
error.
`,
	run: runRepair,
}

func runRepair(e *env, args []string) int {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "repair", "%s", flagError(err))
	}
	if len(pos) > 1 {
		return usageError(e, "repair", "want at most one workflow or run ID, got %d arguments", len(pos))
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
		if id == "" {
			// "" means every run to the engine; an empty variable in a script must not widen it.
			return usageError(e, "repair", "the ID is empty")
		}
	}
	b, err := openBackend(e, dbPath(e, *db), steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend repair: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	rep, err := b.Repair(context.Background(), id)
	if err != nil {
		return commandError(e, "repair", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	for _, l := range rep.Indexes {
		fmt.Fprintln(e.stdout, l)
	}
	if len(rep.Rebuilt) == 0 {
		if len(rep.Indexes) == 0 {
			fmt.Fprintf(e.stdout, "nothing to repair (%s examined)\n", plural(rep.Runs, "open run"))
		}
		return exitOK
	}
	for _, r := range rep.Rebuilt {
		fmt.Fprintln(e.stdout, r)
	}
	return exitOK
}
