package commands

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/termtext"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
)

var migrateCmd = &command{
	summary: "move open runs to a new text of their workflow file",
	usage: `Usage: wend migrate ID... --to FILE [--dry-run] [--yes] [--db PATH]
       wend migrate --where FILTER --to FILE [--dry-run | --yes] [--rps N] [--db PATH]

Moves the open run of each workflow (or run) ID, or each open run the filter matches, to
the workflow text of FILE. Each run's whole history is first replayed on FILE, as
'wend validate --against' does, under the run's lock: a run for which FILE takes every
recorded decision goes on under FILE (its history records WorkflowMigrated: from which
file version to which, and who asked); a run for which it does not is left as it was, and
the line says the step and event where they part. A run already on FILE's text is left
alone, so running the command again after an interruption finishes what it began. When
wend serve holds the database the moves go through its control socket. With --temporal
HOST:PORT each run is sent the move as a signal, and its workflow applies it only when its
history, where the signal reaches it, replays on FILE; the line is its verdict, once a
worker has applied it.

One line per run on stdout: moved, already there, or breaks (or, with --dry-run, holds
or breaks); refusals (no such run, a finished run, another workflow) on stderr.

Flags:
  --to FILE       the workflow file to move to; it must pass wend validate and have the
                  runs' workflow name
  --dry-run       check every run and move none
  --yes           needed to move more than one run (--where, or several IDs)
  --db PATH       database file (default $WEND_DB, else .wend/wend.db)
  --where FILTER  the runs to move, as wend list --where reads it; only open runs are checked.
                  When wend serve holds the database, serve moves them as a batch (wend batch
                  show ID follows it; a restarted serve goes on with it): its failures, such
                  as a run the file would break, are listed at its end
  --rps N         with --where through wend serve: at most N moves a second (default 50)

Exit codes: 0 every run moved, was already there (or, with --dry-run, would move), 1 a run
would break or was refused, 2 usage or I/O error, FILE invalid, or several runs without
--yes.
`,
	run: runMigrate,
}

// migrator is a backend that moves runs: this machine's engine or wend serve's (not Temporal).
type migrator interface {
	Migrate(ctx context.Context, id string, req api.MigrateRequest) (api.MigrateResult, error)
}

// migrateTally counts what happened to the runs.
type migrateTally struct{ moved, already, breaks, refused int }

func runMigrate(e *env, args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	to := fs.String("to", "", "")
	dryRun := fs.Bool("dry-run", false, "")
	yes := fs.Bool("yes", false, "")
	filter := fs.String("where", "", "")
	rps := rpsFlag(fs)
	db := dbFlag(fs)
	ids, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "migrate", "%s", flagError(err))
	}
	switch {
	case *to == "":
		return usageError(e, "migrate", "--to FILE names the workflow file to move the runs to")
	case *filter == "" && len(ids) == 0:
		return usageError(e, "migrate", "name the runs: one or more workflow or run IDs, or --where FILTER")
	case *filter != "" && len(ids) > 0:
		return usageError(e, "migrate", "give IDs or --where, not both")
	case *dryRun && *yes:
		return usageError(e, "migrate", "give --dry-run or --yes, not both")
	}
	if msg := checkRPS(*rps, *filter != ""); msg != "" {
		return usageError(e, "migrate", "%s", msg)
	}
	var w where
	if *filter != "" {
		if w, err = parseWhere(*filter); err != nil {
			return usageError(e, "migrate", "%s", err)
		}
		w.rps = *rps
	}
	nw, src, code := loadMigrateTarget(e, *to)
	if nw == nil {
		return code
	}
	b, err := openBackend(e, dbPath(e, *db), steerRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend migrate: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	m, ok := b.(migrator)
	if !ok {
		fmt.Fprintln(e.stderr, "wend migrate: this backend cannot move runs (wend migrate moves the runs of a local database, or of the wend serve holding it)")
		return exitUsage
	}
	if *filter != "" {
		runs, err := b.List(w.q, 0)
		if err != nil {
			return filterError(e, "migrate", err)
		}
		ids = ids[:0]
		for _, r := range runs {
			if r.Open() && !r.NeverStarted() {
				ids = append(ids, r.RunID)
			}
		}
		fmt.Fprintf(e.stderr, "wend migrate: %d open run(s) match (%d finished or queued ones skipped)\n", len(ids), len(runs)-len(ids))
		if len(ids) == 0 {
			return exitOK
		}
	}
	if !*dryRun && !*yes && (len(ids) > 1 || *filter != "") {
		return needYes(e, "migrate", len(ids))
	}
	abs, err := filepath.Abs(*to)
	if err != nil {
		abs = *to
	}
	if c, ok := b.(*client); ok && *filter != "" && !*dryRun {
		// Through wend serve a filter's moves are a batch: durable, paced, resumed after a
		// restart of serve; a run it would break is a failure whose reason says where.
		op := bulkOp{name: "migrate", batch: api.BatchRequest{Operation: api.BatchOpMigrate,
			Migrate: &api.BatchMigrate{File: abs, Source: src, By: server.LocalUser()}}}
		if code, ok := bulkThroughBatch(e, c, w, op); ok {
			return code
		}
	}
	req := api.MigrateRequest{File: abs, Source: src, DryRun: *dryRun, By: server.LocalUser()}
	var t migrateTally
	for i, id := range ids {
		migrateOne(e, b, m, id, *to, nw, req, &t)
		if (i+1)%bulkProgressEvery == 0 && i+1 < len(ids) {
			fmt.Fprintf(e.stderr, "wend migrate: %d of %d done\n", i+1, len(ids))
		}
	}
	fmt.Fprintln(e.stderr, t.summary(*dryRun))
	if t.breaks+t.refused > 0 {
		return exitFailed
	}
	return exitOK
}

// loadMigrateTarget reads and validates --to as wend validate does; nil with the exit code
// when it is not a valid workflow.
func loadMigrateTarget(e *env, file string) (*spec.Workflow, string, int) {
	src, err := spec.ReadWorkflowFile(file)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend migrate: --to %s: %v\n", file, err)
		return nil, "", exitUsage
	}
	w, ds := (&spec.Loader{}).Load(file, src)
	if ds.HasErrors() {
		printText(e, relativize(ds))
		fmt.Fprintf(e.stderr, "wend migrate: --to %s does not pass wend validate; no run was moved\n", file)
		return nil, "", exitUsage
	}
	return w, string(src), exitOK
}

// migrateOne moves (or checks) one run and says what happened on stdout, or why not on stderr.
func migrateOne(e *env, b backend, m migrator, id, file string, nw *spec.Workflow, req api.MigrateRequest, t *migrateTally) {
	res, err := m.Migrate(context.Background(), id, req)
	if err != nil {
		t.refused++
		fmt.Fprintf(e.stderr, "wend migrate: %s\n", termtext.Escape(err.Error(), "")) // it names the run
		return
	}
	head := fmt.Sprintf("%s (run %s): ", termtext.Escape(res.Run.WorkflowID, ""), res.Run.RunID)
	switch {
	case res.Already:
		t.already++
		fmt.Fprintf(e.stdout, "%salready on %s (file version %s)\n", head, filepath.ToSlash(file), shortSHA(res.ToSHA256))
	case res.Divergence != nil:
		t.breaks++
		v := runVerdict{run: openHistory{workflowID: termtext.Escape(res.Run.WorkflowID, ""), runID: res.Run.RunID}, file: file, w: nw, old: runSpec(b, res.Run.RunID),
			d: &engine.Divergence{Seq: res.Divergence.Seq, Recorded: history.EventType(res.Divergence.Recorded), Step: res.Divergence.Step,
				Decided: history.EventType(res.Divergence.Decided), At: res.Divergence.At, Reason: res.Divergence.Reason}}
		fmt.Fprintf(e.stdout, "%s; left on file version %s\n", v.String(), shortSHA(res.FromSHA256))
	case res.Moved:
		t.moved++
		fmt.Fprintf(e.stdout, "%smoved from file version %s to %s (%s)\n", head, shortSHA(res.FromSHA256), shortSHA(res.ToSHA256), filepath.ToSlash(file))
	default: // a dry run that holds
		t.moved++
		fmt.Fprintf(e.stdout, "%sholds: would move from file version %s to %s (%s)\n", head, shortSHA(res.FromSHA256), shortSHA(res.ToSHA256), filepath.ToSlash(file))
	}
}

// runSpec is the workflow a run is on now, to name the steps it had where a new file breaks
// it; nil when it cannot be read.
func runSpec(b backend, runID string) *spec.Workflow {
	doc, err := b.Export(runID)
	if err != nil {
		return nil
	}
	h := fromExport(doc, "")
	if len(h.events) == 0 {
		return nil
	}
	st, err := history.DataOf[history.Started](h.events[0])
	if err == nil {
		st, err = history.CurrentSpec(st, h.events)
	}
	if err != nil {
		return nil
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		return nil
	}
	return w
}

func (t migrateTally) summary(dryRun bool) string {
	n := t.moved + t.already + t.breaks + t.refused
	if dryRun {
		return fmt.Sprintf("wend migrate --dry-run: %d run(s): %d would move, %d already there, %d would break, %d refused; nothing was moved",
			n, t.moved, t.already, t.breaks, t.refused)
	}
	return fmt.Sprintf("wend migrate: %d run(s): %d moved, %d already there, %d would break (left as they were), %d refused",
		n, t.moved, t.already, t.breaks, t.refused)
}

// shortSHA is a file version as people read it: the first 12 hex digits of its sha256.
func shortSHA(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
