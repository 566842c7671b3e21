package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// ErrUnresolvedWorkflow refuses a StartRequest that names a registered workflow: only the
// control API knows the registered files.
var ErrUnresolvedWorkflow = errors.New("a registered workflow name is resolved by the control API, not the engine")

// Start begins a run, or returns the existing run when the workflow id is taken
// (docs/reliability.md G8: start is idempotent by id). The bool reports whether a new run was
// started.
func (e *Engine) Start(ctx context.Context, req StartRequest) (history.Run, bool, error) {
	done, err := e.enter()
	if err != nil {
		return history.Run{}, false, err
	}
	defer done()
	if req.Workflow != "" {
		return history.Run{}, false, fmt.Errorf("start %s: %w", req.Workflow, ErrUnresolvedWorkflow)
	}
	if err := CheckID("workflow id", req.WorkflowID); err != nil {
		return history.Run{}, false, fmt.Errorf("start: %w", err)
	}
	if err := CheckPayload("input", req.Input); err != nil {
		return history.Run{}, false, fmt.Errorf("start: %w", err)
	}
	if req.TraceParent != "" {
		if _, err := tracecontext.Parse(req.TraceParent); err != nil {
			return history.Run{}, false, fmt.Errorf("start: %w: %w", ErrInvalidInput, err)
		}
	}
	// The id is claimed in memory, not under e.mu across the commit: concurrent starts of other
	// ids share a group commit, and a second start of the same id waits for the first to
	// publish its run, then finds it in the store (G8).
	if req.WorkflowID != "" {
		release, err := e.claimID(ctx, req.WorkflowID)
		if err != nil {
			return history.Run{}, false, err
		}
		defer release()
		if runs, err := e.store.Runs(history.RunFilter{WorkflowID: req.WorkflowID}); err != nil {
			return history.Run{}, false, err
		} else if len(runs) > 0 { // the id is taken (G8), so this is the run the caller wants
			return runs[0], false, e.sameStart(runs, req.Input)
		}
	}
	sum := sha([]byte(req.Source))
	w, sum, ds := e.specs.forStart(req.SpecFile, req.Source, sum)
	if ds.HasErrors() {
		return history.Run{}, false, fmt.Errorf("start %s: the workflow is invalid:\n%s", req.SpecFile, ds.Error())
	}
	input, err := checkInput(ctx, w, req.Input)
	if err != nil {
		return history.Run{}, false, err
	}
	if req.WorkflowID == "" { // a fresh random id: no other start can hold it
		req.WorkflowID = w.Name + "-" + e.opts.NewID()[:8]
	}
	st := history.Started{WorkflowID: req.WorkflowID, RunID: e.opts.NewID(), Input: input, SpecFile: req.SpecFile,
		SpecSource: req.Source, SpecSHA256: sum, ExecutionStarted: e.clock.Now(),
		Rules: history.RulesCurrent, TraceParent: req.TraceParent}
	giveBack := func() {}
	if w.Concurrency != nil {
		queued, release, err := e.slotOrQueue(ctx, w, st)
		if err != nil {
			return history.Run{}, false, err
		}
		if queued != nil {
			return *queued, true, nil
		}
		giveBack = release
	}
	lr, evs, err := e.newRun(w, st)
	if err != nil {
		giveBack()
		return history.Run{}, false, err
	}
	c := history.Commit{Runs: []history.RunUpdate{{Run: lr.rec, Events: evs}}}
	tasksFor(lr.rec, evs, lr.interp.Activity, &c)
	slots := e.reserveDispatch(&c, w.Limits)
	if err := e.store.Commit(ctx, c); err != nil {
		slots.release(e)
		giveBack()
		if storeRefused(err) { // this run's content: nothing was written, and the engine goes on
			return history.Run{}, false, fmt.Errorf("start %s: %w", req.SpecFile, err)
		}
		e.fatal(fmt.Errorf("commit new run: %w", err))
		return history.Run{}, false, err
	}
	lr.mu.Lock() // before the run is visible, so no input reaches it before its first effects
	e.publish(lr)
	e.effects(lr, evs, slots)
	slots.release(e)
	rec := lr.rec
	lr.mu.Unlock()
	return rec, true, nil
}

// claimID marks a workflow id as being started until release is called (after the new run is
// published, or the start gave up): another Start, a child start, a signal or a wait on the
// id waits meanwhile (awaitStartLocked), so none sees the run committed but not yet driven.
func (e *Engine) claimID(ctx context.Context, workflowID string) (release func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		if e.stopped != nil {
			return nil, e.stopped
		}
		ch, busy := e.starting[workflowID]
		if !busy {
			break
		}
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			e.mu.Lock()
			return nil, ctx.Err()
		}
		e.mu.Lock()
	}
	return e.claimLocked(workflowID), nil
}

// claimLocked is claimID for an id no Start holds; e.mu is held.
func (e *Engine) claimLocked(workflowID string) (release func()) {
	ch := make(chan struct{})
	e.starting[workflowID] = ch
	return func() {
		e.mu.Lock()
		delete(e.starting, workflowID)
		e.mu.Unlock()
		close(ch)
	}
}

// awaitStartLocked waits until no Start holds the workflow id (claimID); e.mu is held, and
// released while waiting.
func (e *Engine) awaitStartLocked(workflowID string) {
	for {
		ch, busy := e.starting[workflowID]
		if !busy {
			return
		}
		e.mu.Unlock()
		<-ch
		e.mu.Lock()
	}
}

// checkInput decodes a run's input and validates it against the workflow's input schema; the
// validation stops when ctx ends (the client that asked went away).
func checkInput(ctx context.Context, w *spec.Workflow, raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%w: not JSON: %v", ErrInvalidInput, err)
		}
	}
	if v == nil {
		// No input (or null) is the empty object, so `input.n ?? 0`, which validate accepts,
		// reads a missing field instead of failing to index null.
		raw, v = json.RawMessage("{}"), map[string]any{}
	}
	if w.InputSchema != nil {
		if err := spec.ValidateInputContext(ctx, w.InputSchema, v); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("start: %w", err) // the client went away: not the input's fault
			}
			return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
	}
	return raw, nil
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// newRun builds a run's state machine and its first events (WorkflowStarted and the decisions
// it implies), numbered from 1, not yet committed.
func (e *Engine) newRun(w *spec.Workflow, st history.Started) (*liveRun, []history.Event, error) {
	now := e.clock.Now()
	lr := &liveRun{dir: filepath.Dir(st.SpecFile), workflowID: st.WorkflowID, w: w, interp: interpreter.New(w, st), rec: history.Run{WorkflowID: st.WorkflowID, RunID: st.RunID,
		Name: w.Name, Status: history.StatusRunning, SpecFile: st.SpecFile, SpecSHA256: st.SpecSHA256,
		ParentRunID: st.ParentRunID, ParentStep: st.ParentStep, StartedAt: now}, lastUsed: now}
	first := history.Event{Type: history.WorkflowStarted, Time: now, Data: history.MustData(st)}
	decisions, err := lr.interp.Apply(first)
	if err != nil {
		return nil, nil, fmt.Errorf("start run: %w", err)
	}
	evs := append([]history.Event{first}, decisions...)
	e.numberFirst(lr, evs)
	return lr, evs, nil
}

// numberFirst numbers a new run's first events evs from 1 and brings lr's record to them: its
// last seq, its search fields, and its end when they close the run.
func (e *Engine) numberFirst(lr *liveRun, evs []history.Event) {
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	lr.rec.LastSeq = uint64(len(evs))
	e.keepSearch(lr, &lr.rec)
	if last := evs[len(evs)-1]; last.Type.Terminal() {
		lr.rec.Status, lr.rec.ClosedReason = history.ClosedBy(last)
		lr.rec.ClosedAt = last.Time
	}
}

// continueAsNew prepares the next run of a workflow id, to commit with the old run's end.
func (e *Engine) continueAsNew(old *liveRun, last history.Event) (*liveRun, []history.Event, error) {
	c, err := history.DataOf[history.Closed](last)
	if err != nil {
		return nil, nil, err
	}
	prev, err := e.started(old.rec.RunID)
	if err != nil {
		return nil, nil, err
	}
	// The next run is a new run: its ids derive from its own run id (not a retried run's exec
	// base, which would repeat the previous run's activity and child ids), its run timeout
	// starts now, and it follows today's rules whatever rules the previous run had.
	st := prev
	st.RunID, st.Input = e.opts.NewID(), c.Input
	st.RetryOf, st.ExecBase, st.RunStarted, st.Rules = "", "", time.Time{}, history.RulesCurrent
	return e.newRun(old.w, st)
}

// started reads a run's WorkflowStarted payload.
func (e *Engine) started(runID string) (history.Started, error) {
	evs, err := e.store.Events(runID, 0)
	if err != nil {
		return history.Started{}, err
	}
	if len(evs) == 0 || evs[0].Type != history.WorkflowStarted {
		return history.Started{}, fmt.Errorf("run %s: history does not start with WorkflowStarted", runID)
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return st, err
	}
	return history.CurrentSpec(st, evs) // the next run of a moved run starts on its new text
}

func (e *Engine) publish(lr *liveRun) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.publishLocked(lr)
}

func (e *Engine) publishLocked(lr *liveRun) {
	if !lr.rec.Open() {
		return
	}
	e.runs[lr.rec.RunID] = lr
	e.current[lr.rec.WorkflowID] = lr.rec.RunID
}

// unpublish stops driving a run Resume registered whose history turned out not to replay,
// as Recover never drove one: input to its workflow id is refused (openRun) and WaitClosed
// callers are woken to say so. lr.mu is held.
func (e *Engine) unpublish(lr *liveRun) {
	e.mu.Lock()
	if e.runs[lr.rec.RunID] != lr {
		e.mu.Unlock()
		return
	}
	delete(e.runs, lr.rec.RunID)
	if e.current[lr.workflowID] == lr.rec.RunID {
		delete(e.current, lr.workflowID)
	}
	chans := e.closeWaits[lr.workflowID]
	delete(e.closeWaits, lr.workflowID)
	e.mu.Unlock()
	for _, ch := range chans {
		close(ch)
	}
}

func (e *Engine) live(runID string) *liveRun {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[runID]
}

// liveByWorkflow returns the open run of a workflow id.
func (e *Engine) liveByWorkflow(workflowID string) *liveRun {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.awaitStartLocked(workflowID)
	return e.runs[e.current[workflowID]]
}

// closed forgets a finished run and tells whoever waits on it: a parent, wait_for_workflow
// steps, WaitClosed callers. A continued run hands its waiters to the next run.
func (e *Engine) closed(lr *liveRun) {
	rec := lr.rec
	e.mu.Lock()
	delete(e.runs, rec.RunID)
	if e.current[rec.WorkflowID] == rec.RunID {
		delete(e.current, rec.WorkflowID)
	}
	if rec.Status == history.StatusContinued {
		e.mu.Unlock()
		return
	}
	chans := e.closeWaits[rec.WorkflowID]
	delete(e.closeWaits, rec.WorkflowID)
	refs := e.waits[rec.WorkflowID]
	delete(e.waits, rec.WorkflowID)
	e.mu.Unlock()
	e.releaseSlot(rec.Name, rec.WorkflowID) // a continued run keeps it for the next run
	for _, ch := range chans {
		close(ch)
	}
	if rec.ParentRunID != "" {
		e.notify(rec, waitRef{rec.ParentRunID, rec.ParentStep}, history.ChildWorkflowCompleted, history.ChildWorkflowFailed)
	}
	for _, w := range refs {
		e.notify(rec, w, history.WorkflowWaitCompleted, history.WorkflowWaitFailed)
	}
}

// notify delivers a closed run's outcome to a waiting step, asynchronously: the waiter's
// lock is never taken while another run's is held.
func (e *Engine) notify(rec history.Run, w waitRef, ok, failed history.EventType) {
	e.spawn(func() {
		lr := e.live(w.runID)
		if lr == nil {
			return
		}
		ev, err := e.outcomeEvent(rec, w.step, ok, failed)
		if err != nil {
			e.logf("wend: notify run %s: %v", w.runID, err)
			return
		}
		if err := e.deliver(lr, ev); err != nil && !errors.Is(err, ErrRunClosed) {
			e.logf("wend: notify run %s: %v", w.runID, err)
		}
	})
}

// outcomeEvent reads how a run closed and phrases it as an input for a waiting step.
func (e *Engine) outcomeEvent(rec history.Run, step string, ok, failed history.EventType) (history.Event, error) {
	evs, err := e.store.Events(rec.RunID, rec.LastSeq-1)
	if err != nil {
		return history.Event{}, err
	}
	if rec.NeverStarted() && !rec.Open() { // closed while queued under its concurrency key
		c := history.Closed{RunID: rec.RunID, Failure: &history.Failure{Category: history.CategoryCancelled,
			Message: fmt.Sprintf("run %s was %s while queued under its concurrency key, before it started", rec.RunID, rec.ClosedReason)}}
		return history.Event{Type: failed, Step: step, Data: history.MustData(c)}, nil
	}
	if len(evs) == 0 || !evs[len(evs)-1].Type.Terminal() {
		return history.Event{}, fmt.Errorf("run %s has no terminal event", rec.RunID)
	}
	c, err := history.DataOf[history.Closed](evs[len(evs)-1])
	if err != nil {
		return history.Event{}, err
	}
	c.RunID = rec.RunID
	typ := ok
	if rec.Status != history.StatusCompleted {
		typ = failed
		if c.Failure == nil {
			c.Failure = &history.Failure{Category: history.CategoryCancelled, Message: "run " + rec.Status}
		}
	}
	return history.Event{Type: typ, Step: step, Data: history.MustData(c)}, nil
}

// sameStart checks a start with a taken workflow id against the run that took it
// (docs/reliability.md G8): the same input names the same run, and the caller gets it; other
// input is another request under a reused name, refused (ErrIDTaken) rather than answered
// with the old run's outcome.
// The input compared is the first run's: continue_as_new gives later runs their own.
func (e *Engine) sameStart(runs []history.Run, input json.RawMessage) error {
	first := runs[len(runs)-1] // newest first
	st, err := e.startedOrQueued(first)
	if err != nil {
		return err
	}
	if sameJSON(st.Input, input) {
		return nil
	}
	return edgeErr(ErrIDTaken, "start: workflow id %q is taken by run %s (%s), which started with other input; "+
		"wait for that run with 'wend wait %s', or start with another id", first.WorkflowID, runs[0].RunID, runs[0].Status, first.WorkflowID)
}

// sameJSON compares two run inputs as JSON values (key order and spacing aside); empty and
// null are {}, as checkInput records them, so a resend without input matches a run started
// without input, whether it recorded {} or (before that rule) null.
func sameJSON(a, b json.RawMessage) bool {
	norm := func(raw json.RawMessage) (string, bool) {
		if len(raw) == 0 {
			return "{}", true
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false
		}
		if v == nil {
			v = map[string]any{}
		}
		out, err := json.Marshal(v) // maps marshal with sorted keys
		return string(out), err == nil
	}
	x, okx := norm(a)
	y, oky := norm(b)
	return okx && oky && x == y
}

// StartRequest describes a new run: the body of the control API's POST /v1/runs
// (api.StartRequest), which the engine takes as it is.
type StartRequest = api.StartRequest
