package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/wendflow/wend/failpoint"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// MigrateRequest moves the open run of a workflow id to another text of its workflow (wend
// migrate): File is where the text was read (its run_workflow targets are checked from there),
// Source the text, By who asked. DryRun checks without moving.
type MigrateRequest struct {
	WorkflowID string
	File       string
	Source     string
	By         string
	DryRun     bool
}

// MigrateResult is what a migration found for one run.
type MigrateResult struct {
	WorkflowID string
	RunID      string
	FromSHA256 string // the text the run was on
	ToSHA256   string // the new text
	// Moved: the run now runs on the new text (WorkflowMigrated is committed). Already: it was
	// on that text before the request, so nothing was recorded (a repeated move is done).
	Moved, Already bool
	// Divergence is where the new text would decide otherwise than the run's history; the
	// run was left as it was. Nil when it holds.
	Divergence *Divergence
}

// Errors of Migrate, besides the engine's ErrRunClosed, ErrQueued and history.ErrNotFound.
var (
	// ErrInvalidSpec: the new text does not pass wend validate.
	ErrInvalidSpec = errors.New("the workflow file is invalid")
	// ErrOtherWorkflow: the new text is another workflow (its name: differs), or the run is a
	// shard of a for_each, which follows its parent's text.
	ErrOtherWorkflow = errors.New("not a text of the run's workflow")
)

// CheckWorkflowText says why source, read from file, does not pass wend validate; nil when
// it does. A migrate batch checks its text once, before acting on any run.
func CheckWorkflowText(file, source string) error {
	if file == "" {
		file = "workflow.wend.yaml"
	}
	if _, ds := (&spec.Loader{}).Load(file, []byte(source)); ds.HasErrors() {
		return fmt.Errorf("%w:\n%s", ErrInvalidSpec, ds.Error())
	}
	return nil
}

// Migrate checks the open run of req.WorkflowID against req.Source as wend validate --against
// does (its whole history replayed on the new text) and, when the new text takes every
// recorded decision and DryRun is not set, commits WorkflowMigrated: the run goes on under the
// new text. The check and the commit happen under the run's lock, so no input is applied
// between them; the pin change and its event are one commit. A run the check refuses is left
// as it was, and the result says where the texts part.
func (e *Engine) Migrate(ctx context.Context, req MigrateRequest) (MigrateResult, error) {
	res := MigrateResult{WorkflowID: req.WorkflowID, ToSHA256: sha([]byte(req.Source))}
	if err := CheckID("workflow id", req.WorkflowID); err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	if err := CheckID("name of who asks", req.By); err != nil {
		return res, fmt.Errorf("migrate %s: %w", req.WorkflowID, err)
	}
	if req.Source == "" {
		return res, fmt.Errorf("migrate %s: no workflow text to move to: %w", req.WorkflowID, ErrInvalidSpec)
	}
	lr, err := e.openRun(req.WorkflowID)
	if err != nil {
		if errors.As(err, new(*queuedError)) {
			return res, fmt.Errorf("migrate %s: the run is queued and starts on the text it was queued with: %w", req.WorkflowID, ErrQueued)
		}
		return res, fmt.Errorf("migrate %s: %w", req.WorkflowID, err)
	}
	// The new text passes wend validate as a file at req.File (its run_workflow targets are
	// read from there), else as the run's own file; checked before the run's lock is taken.
	file := req.File
	if file == "" {
		file = lr.dir + string(filepath.Separator) + "workflow.wend.yaml"
	}
	nw, ds := (&spec.Loader{}).Load(file, []byte(req.Source))
	if ds.HasErrors() {
		return res, fmt.Errorf("migrate %s: %w:\n%s", req.WorkflowID, ErrInvalidSpec, ds.Error())
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	res.RunID, res.FromSHA256 = lr.rec.RunID, lr.rec.SpecSHA256
	if err := e.ensure(lr); err != nil {
		return res, fmt.Errorf("migrate %s: run %s: %w: %v", req.WorkflowID, lr.rec.RunID, ErrBlocked, err)
	}
	if !lr.rec.Open() {
		return res, fmt.Errorf("migrate %s: run %s is %s: %w", req.WorkflowID, lr.rec.RunID, lr.rec.Status, ErrRunClosed)
	}
	if nw.Name != lr.w.Name {
		return res, fmt.Errorf("migrate %s: run %s runs workflow %q, and %s is workflow %q: %w", req.WorkflowID, lr.rec.RunID, lr.w.Name, file, nw.Name, ErrOtherWorkflow)
	}
	evs, err := e.store.Events(lr.rec.RunID, 0)
	if err != nil {
		return res, fmt.Errorf("migrate %s: read run %s: %w", req.WorkflowID, lr.rec.RunID, err)
	}
	if len(evs) == 0 || evs[0].Type != history.WorkflowStarted || uint64(len(evs)) != lr.rec.LastSeq {
		return res, fmt.Errorf("migrate %s: run %s: its history and its record disagree; see wend check", req.WorkflowID, lr.rec.RunID)
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return res, fmt.Errorf("migrate %s: %w", req.WorkflowID, err)
	}
	if st.Shard != nil {
		return res, fmt.Errorf("migrate %s: run %s is a shard of %s's for_each and follows its parent's text: %w", req.WorkflowID, lr.rec.RunID, st.ParentRunID, ErrOtherWorkflow)
	}
	if res.FromSHA256 == res.ToSHA256 {
		res.Already = true
		return res, nil
	}
	// The run's own file path stays (run_workflow paths and plugin folders resolve against
	// it), so the new text is replayed as the run will be after the move.
	st.SpecSource, st.SpecSHA256 = req.Source, res.ToSHA256
	w, err := e.specs.load(st)
	if err != nil {
		return res, fmt.Errorf("migrate %s: %w: %v", req.WorkflowID, ErrInvalidSpec, err)
	}
	d, err := interpreter.Diverge(w, evs)
	if err != nil {
		return res, fmt.Errorf("migrate %s: run %s: %w", req.WorkflowID, lr.rec.RunID, err)
	}
	if d != nil || req.DryRun {
		res.Divergence = d
		return res, nil
	}
	if err := e.commitMigration(lr, res, req); err != nil {
		return res, fmt.Errorf("migrate %s: %w", req.WorkflowID, err)
	}
	res.Moved = true
	return res, nil
}

// commitMigration records WorkflowMigrated with the record's new spec hash, then rebuilds
// the run's state machine from its history on the new text, as a restart would; lr.mu is held.
func (e *Engine) commitMigration(lr *liveRun, res MigrateResult, req MigrateRequest) error {
	ev := history.Event{Type: history.WorkflowMigrated, Time: e.clock.Now(), Seq: lr.rec.LastSeq + 1,
		Data: history.MustData(history.Migration{FromSHA256: res.FromSHA256, ToSHA256: res.ToSHA256,
			SpecSource: req.Source, File: req.File, By: req.By})}
	rec := lr.rec
	rec.LastSeq++
	rec.SpecSHA256 = res.ToSHA256
	c := history.Commit{Runs: []history.RunUpdate{{Run: rec, Events: []history.Event{ev}}}}
	failpoint.Hit("migrate-before-commit") // checked, nothing recorded
	if err := e.store.Commit(e.ctx, c); err != nil {
		if storeRefused(err) {
			return err
		}
		e.fatal(fmt.Errorf("commit migration of run %s: %w", rec.RunID, err))
		return err
	}
	failpoint.Hit("migrate-after-commit") // moved, not yet answered
	lr.rec = rec
	lr.interp, lr.w, lr.needs = nil, nil, nil
	if err := e.ensure(lr); err != nil {
		return fmt.Errorf("run %s moved, but does not rebuild on its new text: %w", rec.RunID, err)
	}
	if e.opts.Observe != nil {
		e.opts.Observe(rec, ev)
	}
	return nil
}
