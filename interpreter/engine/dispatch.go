package engine

import (
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Dispatch marks. A driving engine writes an activity task with
// Dispatched set before it hands the try to a plugin, so that after a crash Recover can tell
// a try that was (possibly) delivered, which it records as ActivityAttemptInterrupted and
// redelivers as a new attempt, from one that never was (a backoff that ended while wend was
// down, a try made due by wend retry), which it delivers as it is.
//
// The common case costs no commit of its own: a try due at once whose call can start at once
// (a MaxActivities slot is free) is marked in the very commit that schedules it, and the slot
// is held for it until the call starts. Any other try (a slot was busy, its backoff ended, it
// was re-armed at recovery) is marked through its run's input queue just before its call,
// where it shares a commit with whatever else the run has queued.

// errNotOwed: the try a mark was asked for is no longer awaited (cancelled, superseded, the
// run closed): no call is made.
var errNotOwed = errors.New("try no longer awaited")

// heldSlots are the MaxActivities slots reserved by a commit, by task id.
type heldSlots map[string]bool

// take hands the slot reserved for taskID to its call.
func (h heldSlots) take(taskID string) bool {
	if !h[taskID] {
		return false
	}
	delete(h, taskID)
	return true
}

// release gives back the slots no call took.
func (h heldSlots) release(e *Engine) {
	for id := range h {
		delete(h, id)
		<-e.sem
	}
}

// reserveDispatch marks dispatched the activity tasks of c that are due now and for which a
// MaxActivities slot is free, and holds those slots for their calls. A try of an activity
// limits names is left unmarked: it waits for its limit first (limits.go). A parked engine
// makes no calls and marks nothing.
func (e *Engine) reserveDispatch(c *history.Commit, limits map[string]*spec.Limit) heldSlots {
	if e.opts.Parked {
		return nil
	}
	var h heldSlots
	now := e.clock.Now()
	for i := range c.PutTasks {
		t := &c.PutTasks[i]
		if t.Kind != history.TaskActivity || t.Dispatched || t.AvailableAt.After(now) || limitedTask(t, limits) {
			continue
		}
		select {
		case e.sem <- struct{}{}:
		default:
			return h // no slot free: the rest are marked when a slot frees
		}
		if h == nil {
			h = heldSlots{}
		}
		t.Dispatched, h[t.ID] = true, true
	}
	return h
}

// markDispatched writes t's dispatch mark through its run's input queue and returns once it
// is durable; errNotOwed if the run no longer awaits the try.
func (e *Engine) markDispatched(t history.Task, runID string) error {
	lr := e.live(runID)
	if lr == nil {
		return errNotOwed
	}
	t.Dispatched = true
	return e.enqueue(lr, pendingInput{mark: &t, done: make(chan error, 1)}, nil)
}

// commitMarks commits dispatch marks alone (no event of the run was queued with them).
// lr.mu is held.
func (e *Engine) commitMarks(lr *liveRun, marks []history.Task) error {
	if err := e.store.Commit(e.ctx, history.Commit{PutTasks: marks}); err != nil {
		if e.isStopped() == nil && !storeRefused(err) {
			e.fatal(fmt.Errorf("commit dispatch marks of run %s: %w", lr.rec.RunID, err))
		}
		return err
	}
	return nil
}
