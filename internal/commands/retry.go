package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

var retryCmd = &command{
	summary: "resume a failed run from its failed activity",
	usage: `Usage: wend retry ID [--follow | --json] [--db PATH]
       wend retry --where FILTER [--dry-run | --yes] [--rps N] [--db PATH]

Resumes the failed newest run of workflow id ID (or the run with run id ID, when it is its
workflow's newest) from the activity whose failure ended it: a new run under the same
workflow id gets the failed run's history up to that activity's last try, then a new
series of tries for it (RetryRequested). Completed steps do not run again, and the
activity keeps its activity_execution_id, so a plugin's idempotency key holds. The new
run id is printed on stdout.

A run is refused (exit 1, with the reason) when it did not fail (it completed, was
cancelled or is still running), when it timed out, when it failed other than in an
activity (an expression, a limit), or when its compensations ran: its completed steps were
undone, so there is nothing to resume from.

With --temporal HOST:PORT the new run is a new execution of the same workflow id on the
cluster, which its workers drive; --follow follows it there as 'wend run --temporal' does.

Without --follow the new run is recorded and this command returns; when another wend
process holds the database that process drives it at once, otherwise it runs when a wend
process next drives the database (wend resume, wend serve). With --follow this command
drives it (or follows it in the process that holds the database) like 'wend run': a line
per step event on stderr, the output JSON on stdout, and wend run's exit codes.

Flags:
  --follow    drive or follow the new run until it ends
  --json      print {"run": the new run's record, "retry_of": the failed run id}
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)
  --where F   retry every failed run filter F matches that is its workflow's newest, once
              each, newest first; F is as for 'wend cancel --where' (see wend help cancel).
              A line per run retried (NEW_RUN_ID of WORKFLOW_ID resumes FAILED_RUN_ID) on
              stdout; failures, progress and a summary on stderr
  --dry-run   with --where: list the matching runs (WORKFLOW_ID RUN_ID STATUS), do nothing
  --yes       with --where: act (without it, say how many runs match and exit 2)
  --rps N     with --where: at most N runs a second (as for wend cancel --where). Through
              wend serve the runs are retried by a batch (wend help batch): its id on
              stdout instead of a line per run

Exit codes: 0 retry recorded (with --follow: the run completed; --where: for each run
matched, or none matched), 1 no such workflow or the run cannot be retried (with --follow
also: the retried run failed; --where: a run's retry failed), 2 usage or I/O error (--where:
runs match and neither --yes nor --dry-run was given);
with --follow 3 cancelled, 4 timed out, 130 interrupted (the run resumes later).
`,
	run: runRetry,
}

func runRetry(e *env, args []string) int {
	fs := flag.NewFlagSet("retry", flag.ContinueOnError)
	follow := fs.Bool("follow", false, "")
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	filter := fs.String("where", "", "")
	dryRun := fs.Bool("dry-run", false, "")
	yes := fs.Bool("yes", false, "")
	rps := rpsFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "retry", "%s", flagError(err))
	}
	if msg := checkRPS(*rps, *filter != "" || *dryRun || *yes); msg != "" {
		return usageError(e, "retry", "%s", msg)
	}
	if *filter != "" || *dryRun || *yes {
		if *follow || *asJSON {
			return usageError(e, "retry", "--follow and --json take one ID, not --where")
		}
		return retryWhere(e, pos, *filter, *dryRun, *yes, *rps, dbPath(e, *db))
	}
	if len(pos) != 1 {
		return usageError(e, "retry", "want one workflow or run ID, got %d arguments", len(pos))
	}
	if *follow && *asJSON {
		return usageError(e, "retry", "give --follow or --json, not both (--follow prints the run's output)")
	}
	path := dbPath(e, *db)
	if *follow && e.temporal == nil {
		return retryFollow(e, path, pos[0])
	}
	b, err := openBackend(e, path, steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend retry: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	rt, err := b.Retry(context.Background(), pos[0])
	if err != nil {
		return commandError(e, "retry", err)
	}
	if e.temporal != nil {
		return retriedOnTemporal(e, b, rt, *follow, *asJSON)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(rt, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
	} else {
		fmt.Fprintln(e.stdout, rt.Run.RunID)
	}
	where := "it runs when a wend process drives the database (wend resume, wend serve)"
	if c, ok := b.(*client); ok {
		where = fmt.Sprintf("it runs in wend pid %d, which holds the database", c.pid)
	}
	if rt.Run.Status == history.StatusQueued {
		where = fmt.Sprintf("it waits queued under its concurrency key until the key has room (wend show %s says for what)", termtext.Escape(rt.Run.WorkflowID, ""))
	}
	fmt.Fprintf(e.stderr, "wend retry: run %s of %s resumes failed run %s; %s\n", rt.Run.RunID, rt.Run.WorkflowID, rt.RetryOf, where)
	return exitOK
}

// retryFollow retries and then follows the new run as `wend run` follows a run: driven here
// when this process can hold the database, else followed in the process that holds it.
func retryFollow(e *env, path, id string) int {
	return driveOrFollow(e, "retry", path, server.UnknownRun(id),
		func(c *client) int { return retryRemote(e, c, id) },
		func(d *driver) int {
			rt, err := server.New(d.Engine, d.Store).Retry(context.Background(), id)
			if err != nil {
				return commandError(e, "retry", err)
			}
			fmt.Fprintf(e.stderr, "wend retry: run %s of %s resumes failed run %s\n", rt.Run.RunID, rt.Run.WorkflowID, rt.RetryOf)
			return d.follow(rt.Run.WorkflowID)
		})
}

// retryRemote retries in the process that holds the database, which drives the new run,
// and follows it there.
func retryRemote(e *env, c *client, id string) int {
	rt, err := c.Retry(context.Background(), id)
	if err != nil {
		return commandError(e, "retry", err)
	}
	fmt.Fprintf(e.stderr, "wend retry: run %s of %s resumes failed run %s; it runs in wend pid %d, which holds the database\n",
		rt.Run.RunID, rt.Run.WorkflowID, rt.RetryOf, c.pid)
	return followRemote(e, c, rt.Run.WorkflowID)
}

// retriedOnTemporal reports a retry the cluster's workers drive, and with --follow follows
// the new run as `wend run --temporal` does.
func retriedOnTemporal(e *env, b backend, rt api.Retried, follow, asJSON bool) int {
	fmt.Fprintf(e.stderr, "wend retry: run %s of %s resumes failed run %s on Temporal %s (namespace %s)\n",
		rt.Run.RunID, rt.Run.WorkflowID, rt.RetryOf, e.temporal.Address, e.temporal.Namespace)
	switch {
	case follow:
		return followElsewhere(e, b, rt.Run.WorkflowID, "on Temporal",
			"it goes on when a worker of its task queue drives it (wend worker --temporal ADDR)")
	case asJSON:
		out, _ := json.MarshalIndent(rt, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
	default:
		fmt.Fprintln(e.stdout, rt.Run.RunID)
	}
	return exitOK
}

// retryWhere is wend retry --where (bulk.go): the failed runs that are their workflow's newest.
func retryWhere(e *env, pos []string, filter string, dryRun, yes bool, rps float64, path string) int {
	w, msg := whereArgs(pos, filter, dryRun, yes)
	w.rps = rps
	if msg != "" {
		return usageError(e, "retry", "%s", msg)
	}
	b, err := openBackend(e, path, steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend retry: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	// A failed run is retried only when it is its workflow's newest: an older one was
	// superseded (by a retry, or a continue-as-new) and the retry would be refused.
	return bulk(e, b, w, dryRun, yes, bulkOp{name: "retry", skipped: "not failed or superseded",
		batch: api.BatchRequest{Operation: api.BatchOpRetry},
		eligible: func(r history.Run) bool {
			if r.Status != history.StatusFailed {
				return false
			}
			runs, err := b.List(api.ListQuery{WorkflowID: r.WorkflowID}, 1)
			return err == nil && len(runs) == 1 && runs[0].RunID == r.RunID
		},
		act: func(r history.Run) (string, error) {
			rt, err := b.Retry(context.Background(), r.RunID)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s of %s resumes %s", rt.Run.RunID, termtext.Escape(rt.Run.WorkflowID, ""), rt.RetryOf), nil
		}})
}
