package commands

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"time"

	"github.com/wendflow/wend/internal/termtext"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

var purgeCmd = &command{
	summary: "delete closed runs for good",
	usage: `Usage: wend purge [--closed-before T] [--status S] [--workflow W] [--dry-run] [--export DIR] [--db PATH]
       wend purge --all [--dry-run] [--export DIR] [--db PATH]

Deletes closed runs that match every filter given, each with its events, tasks and index
entries. An open run is never purged. A child run goes with its parent (right after it,
whatever the filters), never on its own while its parent is kept. Runs are deleted in small
transactions, oldest closed first, so a running 'wend serve' holding the database (the
purge goes through it) keeps answering; an interrupted purge (Ctrl-C, a crash) leaves each
run whole or gone. 'wend serve --retention' and a workflow's retention: do the same
periodically.

Flags:
  --closed-before T  runs closed before T: an RFC 3339 time (2026-05-01T12:00:00Z), a date
                     (2026-05-01, midnight UTC), or a duration ago (720h, 30d)
  --status S         runs closed with status S: completed, failed, cancelled or continued
  --workflow W       runs of the workflow named W (its name:, as wend list shows it)
  --all              every closed run; needed when no filter is given
  --dry-run          list the runs that would be purged (workflow id, run id, status,
                     closed at) and delete nothing
  --export DIR       write each run's history export (wend history --json) to DIR/RUN-ID.json
                     before deleting it; the files are synced before the runs go
  --db PATH          database file (default $WEND_DB, else .wend/wend.db)

Progress and a summary go to stderr.

Exit codes: 0 purged (or nothing matched), 1 a run could not be exported or deleted (the
runs before it are purged), 2 usage error or no database.
`,
	run: runPurge,
}

// purgeChunk is how many runs the command exports, then asks to delete, at a time: one request
// to a serve, which deletes them in transactions of a few dozen.
const purgeChunk = 500

// purgeBackend is a backend that can purge: the database itself or a serve holding it.
type purgeBackend interface {
	PurgeSelect(f history.PurgeFilter) ([]history.Run, error)
	Purge(ctx context.Context, ids []string) ([]history.Run, error)
}

// closedStatuses are the statuses --status takes.
var closedStatuses = []string{history.StatusCompleted, history.StatusFailed, history.StatusCancelled, history.StatusContinued}

func runPurge(e *env, args []string) int {
	fs := flag.NewFlagSet("purge", flag.ContinueOnError)
	before := fs.String("closed-before", "", "")
	status := fs.String("status", "", "")
	workflow := fs.String("workflow", "", "")
	all := fs.Bool("all", false, "")
	dryRun := fs.Bool("dry-run", false, "")
	exportDir := fs.String("export", "", "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "purge", "%s", flagError(err))
	}
	if len(pos) > 0 {
		return usageError(e, "purge", "unexpected argument %q: runs are chosen by --closed-before, --status and --workflow", pos[0])
	}
	f := history.PurgeFilter{Status: *status, Workflow: *workflow}
	if f.ClosedBefore, err = closedBefore(*before, time.Now()); err != nil {
		return usageError(e, "purge", "--closed-before: %v", err)
	}
	if f.Status != "" && !slices.Contains(closedStatuses, f.Status) {
		return usageError(e, "purge", "--status: %q is not a closed status (want completed, failed, cancelled or continued; an open run is never purged)", f.Status)
	}
	switch {
	case f.Empty() && !*all:
		return usageError(e, "purge", "give --closed-before, --status or --workflow to choose the runs, or --all to purge every closed run")
	case !f.Empty() && *all:
		return usageError(e, "purge", "give --all or filters, not both")
	}
	if isFlagSet(fs, "export") && *exportDir == "" {
		return usageError(e, "purge", "--export needs a folder")
	}
	b, err := openBackend(e, dbPath(e, *db), purgeDB)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend purge: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	pb, ok := b.(purgeBackend)
	if !ok {
		fmt.Fprintln(e.stderr, "wend purge: this backend cannot purge runs")
		return exitUsage
	}
	runs, err := pb.PurgeSelect(f)
	if err != nil {
		return commandError(e, "purge", err)
	}
	if *dryRun {
		for _, r := range runs {
			fmt.Fprintf(e.stdout, "%s %s %s %s\n", termtext.Escape(r.WorkflowID, ""), termtext.Escape(r.RunID, ""), r.Status, r.ClosedAt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(e.stderr, "wend purge: %d run(s) would be purged\n", len(runs))
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return purgeRuns(ctx, e, b, pb, runs, *exportDir)
}

// purgeRuns exports (when dir is set) and deletes runs, a chunk at a time, reporting progress.
func purgeRuns(ctx context.Context, e *env, b backend, pb purgeBackend, runs []history.Run, dir string) int {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintf(e.stderr, "wend purge: --export: %v\n", err)
			return exitUsage
		}
	}
	purged := 0
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "wend purge: %v\n", err)
		fmt.Fprintf(e.stderr, "wend purge: %d of %d run(s) purged before the error\n", purged, len(runs))
		return exitFailed
	}
	for start := 0; start < len(runs); start += purgeChunk {
		chunk := runs[start:min(start+purgeChunk, len(runs))]
		if err := ctx.Err(); err != nil {
			return fail(fmt.Errorf("interrupted: %w", err))
		}
		if dir != "" {
			if err := exportRuns(b, chunk, dir); err != nil {
				return fail(err)
			}
		}
		ids := make([]string, len(chunk))
		for i, r := range chunk {
			ids[i] = r.RunID
		}
		done, err := pb.Purge(ctx, ids)
		purged += len(done)
		if err != nil {
			return fail(err)
		}
		if end := start + len(chunk); end < len(runs) {
			fmt.Fprintf(e.stderr, "wend purge: %d of %d run(s) purged\n", purged, len(runs))
		}
	}
	skipped := ""
	if n := len(runs) - purged; n > 0 {
		skipped = fmt.Sprintf(" (%d skipped: gone or no longer purgeable)", n)
	}
	fmt.Fprintf(e.stderr, "wend purge: %d run(s) purged%s\n", purged, skipped)
	return exitOK
}

// exportRuns writes each run's history export to dir, then syncs dir, so the exports are on
// disk before the runs are deleted.
func exportRuns(b backend, runs []history.Run, dir string) error {
	for _, r := range runs {
		doc, err := b.Export(r.RunID)
		if err != nil {
			return fmt.Errorf("export run %s: %w", r.RunID, err)
		}
		if doc.Workflow.RunID != r.RunID {
			// An id is resolved as a workflow id first: a run id that is also a workflow id
			// names another run.
			return fmt.Errorf("export run %s: the id names run %s of workflow %s; not purged", r.RunID, doc.Workflow.RunID, doc.Workflow.WorkflowID)
		}
		js, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return fmt.Errorf("export run %s: %w", r.RunID, err)
		}
		if err := writeFileAtomic(filepath.Join(dir, exportName(r.RunID)), append(js, '\n')); err != nil {
			return fmt.Errorf("export run %s: %w", r.RunID, err)
		}
	}
	return syncFolder(dir)
}

// exportName is the file a run's export is written to: its run id, escaped so that no id can
// name a path outside the folder.
func exportName(runID string) string {
	return url.PathEscape(runID) + ".json"
}

// syncFolder makes the files renamed into dir durable.
func syncFolder(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// closedBefore parses --closed-before: a time or date (listTime), or a duration before now.
func closedBefore(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := spec.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := listTime("", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a duration like 720h or 30d, a date like 2026-05-01 or an RFC 3339 time like 2026-05-01T12:00:00Z", s)
	}
	return t, nil
}
