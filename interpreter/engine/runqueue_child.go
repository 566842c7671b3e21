package engine

import (
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// errAncestorHolds is slotOrQueue's answer for a child whose key's slots its own ancestor
// runs hold: queued, it would wait for runs that wait for it, forever.
var errAncestorHolds = errors.New("the child's key is held by its own parent runs")

// startKeyedChild starts a run_workflow child whose workflow declares `concurrency:`: it
// takes a slot of its key like any start, or waits queued (its queued record and task
// replace the parent's child task in one commit); the parent's step waits for it either way,
// and is told how it ended when it closes (or is cancelled while queued).
func (e *Engine) startKeyedChild(parent history.Run, step, taskID string, lr *liveRun, evs []history.Event) error {
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return err
	}
	queued, giveBack, err := e.slotOrQueue(e.ctx, lr.w, st, taskID)
	switch {
	case errors.Is(err, ErrInvalidInput) || errors.Is(err, errAncestorHolds):
		return e.failChild(parent, step, err)
	case err != nil:
		return err
	case queued != nil:
		return nil
	}
	c := history.Commit{Runs: []history.RunUpdate{{Run: lr.rec, Events: evs}}, DeleteTasks: []string{taskID}}
	tasksFor(lr.rec, evs, lr.interp.Activity, &c)
	slots := e.reserveDispatch(&c, lr.w.Limits)
	if err := e.store.Commit(e.ctx, c); err != nil {
		slots.release(e)
		giveBack()
		if storeRefused(err) {
			return e.failChild(parent, step, err)
		}
		e.fatal(fmt.Errorf("commit child run: %w", err))
		return err
	}
	lr.mu.Lock()
	e.publish(lr)
	e.effects(lr, evs, slots)
	slots.release(e)
	lr.mu.Unlock()
	return nil
}

// ancestorsFillLocked refuses to queue a child whose key's slots are all held by its own
// ancestors (a workflow that runs itself as a child under the same key): it would never
// start. Other waits between runs (a run's child waiting on a key another run's child holds)
// are the workflows' to avoid, as with any lock. q.mu is held.
func (e *Engine) ancestorsFillLocked(k *keyedRuns, w *spec.Workflow, st history.Started, key string) error {
	held := 0
	for id, depth := st.ParentRunID, 0; id != "" && depth < 100; depth++ {
		r, err := e.store.Run(id)
		if err != nil {
			return nil // the parent's own check reports it
		}
		if r.Name == w.Name && k.holders[r.WorkflowID] == key {
			held++
		}
		id = r.ParentRunID
	}
	if held > 0 && held >= w.Concurrency.Limit {
		return fmt.Errorf("start child %s: %w: %d of the %d slot(s) of key %q of workflow %q are held by the runs it was started from, "+
			"which wait for it, so it would never start (give the child another key or a higher limit)",
			st.WorkflowID, errAncestorHolds, held, w.Concurrency.Limit, key, w.Name)
	}
	return nil
}
