package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/wendflow/wend/history"
)

// stopCmd runs wend cancel and wend terminate, which differ only in what they ask of the
// backend and how they report it: ID [--reason R] [--json] [--db PATH], the run record after
// the request on stdout, as JSON with --json and else as said by say.
func stopCmd(e *env, args []string, name string, stop func(b backend, ctx context.Context, id, reason string) (history.Run, error),
	say func(history.Run) string) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	reason := fs.String("reason", "", "")
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	filter := fs.String("where", "", "")
	dryRun := fs.Bool("dry-run", false, "")
	yes := fs.Bool("yes", false, "")
	rps := rpsFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, name, "%s", flagError(err))
	}
	bulkMode := *filter != "" || *dryRun || *yes
	if msg := checkRPS(*rps, bulkMode); msg != "" {
		return usageError(e, name, "%s", msg)
	}
	if bulkMode {
		return stopWhere(e, name, pos, *filter, *dryRun, *yes, *asJSON, *reason, *rps, db, stop, say)
	}
	if len(pos) != 1 {
		return usageError(e, name, "want one workflow or run ID, got %d arguments", len(pos))
	}
	b, err := openBackend(e, dbPath(e, *db), steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend %s: %v\n", name, err)
		return exitUsage
	}
	defer b.Close()
	run, err := stop(b, context.Background(), pos[0], *reason)
	if err != nil {
		return commandError(e, name, err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(run, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	fmt.Fprintln(e.stdout, say(run))
	return exitOK
}

// stopWhere is stopCmd with --where (bulk.go).
func stopWhere(e *env, name string, pos []string, filter string, dryRun, yes, asJSON bool, reason string, rps float64, db *string,
	stop func(b backend, ctx context.Context, id, reason string) (history.Run, error), say func(history.Run) string) int {
	if asJSON {
		return usageError(e, name, "--json takes one ID, not --where")
	}
	w, msg := whereArgs(pos, filter, dryRun, yes)
	if msg != "" {
		return usageError(e, name, "%s", msg)
	}
	w.rps = rps
	b, err := openBackend(e, dbPath(e, *db), steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend %s: %v\n", name, err)
		return exitUsage
	}
	defer b.Close()
	return bulkStop(e, b, name, w, dryRun, yes, reason, stop, say)
}

// whereArgs checks a --where command's arguments and parses the filter; the message says
// what is wrong, or is "".
func whereArgs(pos []string, filter string, dryRun, yes bool) (where, string) {
	switch {
	case filter == "":
		return where{}, "--dry-run and --yes go with --where FILTER"
	case len(pos) > 0:
		return where{}, "give an ID or --where, not both"
	case dryRun && yes:
		return where{}, "give --dry-run or --yes, not both"
	}
	w, err := parseWhere(filter)
	if err != nil {
		return where{}, err.Error()
	}
	return w, ""
}
