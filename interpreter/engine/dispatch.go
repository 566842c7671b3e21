package engine

import (
	"errors"
	"fmt"
	"slices"

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

// heldSlots are the MaxActivities slots reserved by a commit, by task id. Copies share the
// set, as a map's would; the zero value holds none. Most commits reserve one slot, taken by
// the first call their effects launch: the set is one allocation with room for that id, and
// take looks at the first id first (the calls launch in the order the slots were reserved).
type heldSlots struct{ s *slotIDs }

type slotIDs struct {
	ids   []string
	first [1]string // ids' storage while it holds one
}

func (h heldSlots) add(taskID string) heldSlots {
	if h.s == nil {
		h.s = &slotIDs{}
		h.s.ids = h.s.first[:0]
	}
	h.s.ids = append(h.s.ids, taskID)
	return h
}

// take hands the slot reserved for taskID to its call.
func (h heldSlots) take(taskID string) bool {
	if h.s == nil {
		return false
	}
	switch i := slices.Index(h.s.ids, taskID); i {
	case -1:
		return false
	case 0:
		h.s.ids = h.s.ids[1:]
	default:
		h.s.ids = slices.Delete(h.s.ids, i, i+1)
	}
	return true
}

// release gives back the slots no call took.
func (h heldSlots) release(e *Engine) {
	if h.s == nil {
		return
	}
	for range h.s.ids {
		<-e.sem
	}
	h.s.ids = h.s.ids[:0]
}

// reserveDispatch marks dispatched the activity tasks of c that are due now and for which a
// MaxActivities slot is free, and holds those slots for their calls. A try of an activity
// limits names is left unmarked: it waits for its limit first (limits.go). A parked engine
// makes no calls and marks nothing.
func (e *Engine) reserveDispatch(c *history.Commit, limits map[string]*spec.Limit) heldSlots {
	var h heldSlots
	if e.opts.Parked {
		return h
	}
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
		t.Dispatched, h = true, h.add(t.ID)
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
