package commands

import (
	"flag"
	"fmt"

	"github.com/wendflow/wend/server"
)

var waitCmd = &command{
	summary: "wait for a run to end and print its output",
	usage: `Usage: wend wait ID [--db PATH]

Follows the run of workflow id ID (or the run with run id ID) until it ends, as 'wend run'
follows the run it starts: a line per step event on stderr, the output JSON on stdout, and
wend run's exit codes. A run that has ended already answers at once. When another wend
process holds the database the run is followed there; otherwise this command drives it (and
every other unfinished run) until it ends, as 'wend resume' would. With --temporal it
follows the run on the cluster, whose workers drive it.

It is how to attach to a run started elsewhere, such as the one a 'wend run --id ID' was
refused for because it started with other input.

Flags:
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 completed, 1 failed or no such workflow, 2 usage or I/O error, 3 cancelled,
4 timed out, 130 interrupted (the run goes on or resumes later).
`,
	run: runWait,
}

func runWait(e *env, args []string) int {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "wait", "%s", flagError(err))
	}
	if len(pos) != 1 {
		return usageError(e, "wait", "want one workflow or run ID, got %d arguments", len(pos))
	}
	id, path := pos[0], dbPath(e, *db)
	if e.temporal != nil { // the cluster's workers drive the run; follow it there
		b, err := openBackend(e, path, readRuns)
		if err != nil {
			fmt.Fprintf(e.stderr, "wend wait: %v\n", err)
			return exitUsage
		}
		defer b.Close()
		return waitRemote(e, b, id)
	}
	return driveOrFollow(e, "wait", path, server.UnknownRun(id),
		func(c *client) int { return waitRemote(e, c, id) },
		func(d *driver) int {
			r, err := server.New(d.Engine, d.Store).Show(id)
			if err != nil {
				return commandError(e, "wait", err)
			}
			return d.follow(r.Run.WorkflowID)
		})
}

// waitRemote follows a run in the process that holds the database.
func waitRemote(e *env, b backend, id string) int {
	r, err := b.Show(id)
	if err != nil {
		return commandError(e, "wait", err)
	}
	return followRemote(e, b, r.Run.WorkflowID)
}
