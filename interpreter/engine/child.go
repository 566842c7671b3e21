package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
	"github.com/wendflow/wend/spec"
)

// goStartChild starts a run_workflow child in the background. It is idempotent: the child's
// workflow id derives from the parent run (see interpreter's childWorkflowID), so after a
// crash the task finds the child it started. parentTrace says the traceparent the parent run
// was started with ("" for none); it is asked only when the child is new.
func (e *Engine) goStartChild(parent history.Run, parentTrace func() string, step string, cs history.ChildSchedule) {
	e.spawn(func() {
		if err := e.startChild(parent, parentTrace, step, cs); err != nil && e.isStopped() == nil {
			e.logf("wend: run %s: start child %s: %v", parent.RunID, cs.WorkflowID, err)
		}
	})
}

func (e *Engine) startChild(parent history.Run, parentTrace func() string, step string, cs history.ChildSchedule) error {
	taskID := stepTaskID(parent.RunID, step)
	e.mu.Lock()
	e.awaitStartLocked(cs.WorkflowID) // a Start of the same id commits without e.mu
	runs, err := e.store.Runs(history.RunFilter{WorkflowID: cs.WorkflowID})
	if err != nil {
		e.mu.Unlock()
		return err
	}
	if len(runs) > 0 { // started before a crash: just finish the bookkeeping
		e.mu.Unlock()
		if !runs[0].Open() && runs[0].Status != history.StatusContinued {
			e.notify(runs[0], waitRef{parent.RunID, step}, history.ChildWorkflowCompleted, history.ChildWorkflowFailed)
		}
		return nil
	}
	lr, evs, err := e.childRun(parent, e.childTrace(parent.RunID, parentTrace, step), step, cs)
	if err != nil {
		e.mu.Unlock()
		return e.failChild(parent, step, err)
	}
	if lr.w.Concurrency != nil && cs.Shard == nil {
		// The queue's lock is never taken under e.mu (cancelQueued takes them the other way):
		// the id is claimed instead, so no Start of it commits meanwhile.
		release := e.claimLocked(cs.WorkflowID)
		e.mu.Unlock()
		defer release()
		return e.startKeyedChild(parent, step, taskID, lr, evs)
	}
	c := history.Commit{Runs: []history.RunUpdate{{Run: lr.rec, Events: evs}}, DeleteTasks: []string{taskID}}
	tasksFor(lr.rec, evs, lr.interp.Activity, &c)
	slots := e.reserveDispatch(&c, lr.w.Limits)
	if err := e.store.Commit(e.ctx, c); err != nil {
		slots.release(e)
		e.mu.Unlock()
		if storeRefused(err) { // the child's content (its id): the step fails, not the engine
			return e.failChild(parent, step, err)
		}
		e.fatal(fmt.Errorf("commit child run: %w", err))
		return err
	}
	lr.mu.Lock()
	e.publishLocked(lr)
	e.mu.Unlock()
	e.effects(lr, evs, slots)
	slots.release(e)
	lr.mu.Unlock()
	return nil
}

// childRun reads, checks and prepares the child's first events. The child's text is read
// now and recorded in its own history; the parent's never changes.
func (e *Engine) childRun(parent history.Run, trace, step string, cs history.ChildSchedule) (*liveRun, []history.Event, error) {
	if cs.Shard != nil {
		return e.shardChildRun(parent, trace, step, cs)
	}
	src, err := spec.ReadWorkflowFile(cs.SpecFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read child workflow: %w", err)
	}
	w, ds := (&spec.Loader{}).Load(cs.SpecFile, src)
	if ds.HasErrors() {
		return nil, nil, fmt.Errorf("child workflow %s is invalid:\n%s", cs.SpecFile, ds.Error())
	}
	input, err := checkInput(context.Background(), w, cs.Input)
	if err != nil {
		return nil, nil, err
	}
	st := history.Started{WorkflowID: cs.WorkflowID, RunID: e.opts.NewID(), Input: input, SpecFile: cs.SpecFile,
		SpecSource: string(src), SpecSHA256: sha(src), ParentRunID: parent.RunID, ParentStep: step,
		ExecutionStarted: e.clock.Now(), Rules: history.RulesCurrent, TraceParent: trace}
	return e.newRun(w, st)
}

// childTrace is the traceparent a child run starts with: in its parent's trace, under the
// parent's run_workflow step, when the parent has a trace (it was started with a traceparent,
// or the engine derives one for every run); "" otherwise.
func (e *Engine) childTrace(parentRunID string, parentTrace func() string, step string) string {
	accepted := parentTrace()
	if accepted == "" && !e.opts.TraceContext {
		return ""
	}
	return tracecontext.ForChild(parentRunID, accepted, step)
}

// recordedTrace reads the traceparent a run was started with from its history, for a child
// task re-armed after a restart (the parent's state machine may not be in memory).
func (e *Engine) recordedTrace(runID string) func() string {
	return func() string {
		st, err := e.started(runID)
		if err != nil {
			e.logf("wend: run %s: its traceparent: %v", runID, err)
		}
		return st.TraceParent
	}
}

// shardChildRun prepares a shard child: a run of the parent's own recorded spec text (not
// the file, which may have changed since) over its slice of a sharded for_each. Its input is
// the interpreter's ShardInput, not the workflow's input, so the input schema does not apply.
func (e *Engine) shardChildRun(parent history.Run, trace, step string, cs history.ChildSchedule) (*liveRun, []history.Event, error) {
	// The parent's own liveRun is not read here: its spec may be evicted (idle.go), and its
	// lock is not taken under e.mu. Its recorded text is the same whoever reads it.
	w := e.specs.cached(parent.SpecFile, parent.SpecSHA256)
	if w == nil {
		pst, err := e.started(parent.RunID)
		if err != nil {
			return nil, nil, err
		}
		if w, err = e.specs.load(pst); err != nil {
			return nil, nil, err
		}
	}
	st := history.Started{WorkflowID: cs.WorkflowID, RunID: e.opts.NewID(), Input: cs.Input, SpecFile: w.File,
		SpecSource: string(w.Source), SpecSHA256: sha(w.Source), ParentRunID: parent.RunID, ParentStep: step,
		ExecutionStarted: e.clock.Now(), Rules: history.RulesCurrent, Shard: cs.Shard, TraceParent: trace}
	return e.newRun(w, st)
}

// failChild reports a child that could not start as the run_workflow step's failure.
func (e *Engine) failChild(parent history.Run, step string, cause error) error {
	lr := e.live(parent.RunID)
	if lr == nil {
		return cause
	}
	f := &history.Failure{Category: history.CategoryChildWorkflow, PropagationKind: "child_workflow", Type: "ChildStartFailed",
		Message: cause.Error(), NonRetryable: true}
	return e.deliver(lr, history.Event{Type: history.ChildWorkflowFailed, Step: step, Data: history.MustData(history.Closed{Failure: f})})
}

// registerWait makes a wait_for_workflow step hear of the workflow's end; if it has ended
// already, at once.
func (e *Engine) registerWait(workflowID string, w waitRef) {
	e.mu.Lock()
	runs, err := e.store.Runs(history.RunFilter{WorkflowID: workflowID})
	if err != nil {
		e.mu.Unlock()
		e.logf("wend: wait for %s: %v", workflowID, err)
		return
	}
	if len(runs) > 0 && !runs[0].Open() && runs[0].Status != history.StatusContinued {
		e.mu.Unlock()
		e.notify(runs[0], w, history.WorkflowWaitCompleted, history.WorkflowWaitFailed)
		return
	}
	e.waits[workflowID] = append(e.waits[workflowID], w)
	e.mu.Unlock()
}

// goCancelChild cancels (or terminates) a child whose parent ended, in the background; a child
// that already finished needs nothing.
func (e *Engine) goCancelChild(cr history.CancelRequest) {
	e.spawn(func() {
		var err error
		if cr.Terminate {
			err = e.Terminate(e.ctx, cr.WorkflowID, cr.Reason)
		} else {
			err = e.Cancel(e.ctx, cr.WorkflowID, cr.Reason)
		}
		if err != nil && !errors.Is(err, ErrRunClosed) && !errors.Is(err, history.ErrNotFound) && e.isStopped() == nil {
			e.logf("wend: cancel child %s: %v", cr.WorkflowID, err)
		}
	})
}
