package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
)

// Signals to a queued run. A queued run has no history yet, so a signal sent to it is kept in
// its queued task (rewritten in one commit with the signal added), checked against the
// workflow's `signals:` contract and deduplicated by its id first. When the run leaves the
// queue its start commit records them as SignalReceived events, in the order they were
// accepted, right after the decisions of its WorkflowStarted, and deletes the task: a signal
// acknowledged to its sender is either in the task or in the run's history, across kill -9.
// The queue's lock is held from reading the task's signals to the start's commit, so a signal
// accepted meanwhile cannot be lost between the two; one that finds the run started waits for
// it to be driven (claimID) and is delivered as to any open run.

// queuedSignal is one signal a queued run took, in its queued task.
type queuedSignal struct {
	Signal history.Signal `json:"signal"`
	At     time.Time      `json:"at"` // when it was accepted (its event is timed at the start)
}

// signalQueued keeps s for the queued run rec. handled is false when rec is no longer queued
// (it started meanwhile, or was cancelled): the caller looks for the run again.
func (e *Engine) signalQueued(ctx context.Context, rec history.Run, s SignalRequest) (handled, duplicate bool, err error) {
	q := &e.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	cur, err := e.store.Run(rec.RunID)
	if err != nil {
		return true, false, err
	}
	if cur.Status != history.StatusQueued {
		return false, false, nil
	}
	qs := q.waitingLocked(cur)
	if qs == nil {
		return true, false, &queuedError{cur} // queued in the store, not in this engine's queue
	}
	w, err := e.specs.load(qs.Started)
	if err != nil {
		return true, false, err
	}
	if err := w.CheckSignalContext(ctx, s.Name, s.Data); err != nil {
		return true, false, fmt.Errorf("run %s of %s: %w", cur.RunID, cur.WorkflowID, err)
	}
	if s.ID != "" {
		if slices.ContainsFunc(qs.Signals, func(x queuedSignal) bool { return x.Signal.SignalID == s.ID }) {
			return true, true, nil
		}
		if seen, err := SignalRecorded(e.store, cur.WorkflowID, s.ID); err != nil || seen {
			return true, seen, err // seen: an earlier run of the id took it (a retry's failed run)
		}
	}
	if len(qs.Signals) >= interpreter.MaxSignals {
		return true, false, edgeErr(ErrSignalLimit, "signal %q to run %s: the queued run holds %d signals, the limit; "+
			"this one was not recorded (send it again once the run has started and taken some)", s.Name, cur.RunID, interpreter.MaxSignals)
	}
	next := *qs
	next.Signals = append(slices.Clip(qs.Signals), queuedSignal{Signal: history.Signal{Name: s.Name, Data: s.Data, SignalID: s.ID}, At: e.clock.Now()})
	task := history.Task{ID: queuedTaskID(cur.RunID), RunID: cur.RunID, Kind: history.TaskQueued, AvailableAt: qs.QueuedAt, Data: history.MustData(&next)}
	if err := e.store.Commit(ctx, history.Commit{PutTasks: []history.Task{task}}); err != nil {
		if !storeRefused(err) {
			e.fatal(fmt.Errorf("commit signal to queued run %s: %w", cur.RunID, err))
		}
		return true, false, fmt.Errorf("signal %s: %w", s.Name, err)
	}
	qs.Signals = next.Signals
	return true, false, nil
}

// waitingLocked is the queued start of rec in this engine: still queued, or let in and not
// yet committed. q.mu is held.
func (q *runQueue) waitingLocked(rec history.Run) *queuedStart {
	for _, m := range []map[string]*queuedStart{q.queued, q.leaving} {
		if qs := m[rec.WorkflowID]; qs != nil && qs.Started.RunID == rec.RunID {
			return qs
		}
	}
	return nil
}

// sealLocked prepares the start commit of qs, which left the queue: it fails when qs was
// cancelled meanwhile, and appends to the run's first events evs the signals qs took, in
// order, as the run's lr applies them. q.mu is held until the commit is done.
func (e *Engine) sealLocked(lr *liveRun, evs []history.Event, qs *queuedStart) ([]history.Event, error) {
	if e.queue.leaving[qs.Started.WorkflowID] != qs {
		return nil, fmt.Errorf("run %s of %q: %w while it was queued", qs.Started.RunID, qs.Started.WorkflowID, ErrRunClosed)
	}
	for i, s := range qs.Signals {
		if lr.interp.Closed() != "" {
			e.logf("wend: run %s ended in its first step; %d signal(s) it took while queued are not recorded", lr.rec.RunID, len(qs.Signals)-i)
			break
		}
		if s.Signal.SignalID != "" && lr.interp.SeenSignal(s.Signal.SignalID) {
			continue
		}
		ev := history.Event{Type: history.SignalReceived, Time: e.clock.Now(), Seq: uint64(len(evs) + 1), Data: history.MustData(s.Signal)}
		decisions, err := lr.interp.Apply(ev)
		if err != nil {
			return nil, fmt.Errorf("run %s: signal %q taken while queued: %w", lr.rec.RunID, s.Signal.Name, err)
		}
		evs = append(append(evs, ev), decisions...)
	}
	e.numberFirst(lr, evs)
	return evs, nil
}
