package engine

import (
	"fmt"
	"runtime"

	"github.com/wendflow/wend/failpoint"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
)

// deliver applies one input event to a run, commits it with the decisions it implies and
// the tasks they create, then acts on them; it returns once the input is durable (or
// refused). Inputs that arrive while a run is busy queue up and are applied and committed
// together by whichever caller is draining the queue: one commit for many outcomes of a
// for_each or parallel step, in arrival order.
func (e *Engine) deliver(lr *liveRun, ev history.Event) error {
	return e.enqueue(lr, pendingInput{ev: ev, done: make(chan error, 1)}, nil)
}

// enqueue is deliver for any queued input: an event, or a dispatch mark (dispatch.go). c, when
// not nil, carries a try that a batch this caller drains launches: the caller runs it once
// enqueue returns (activity.go).
func (e *Engine) enqueue(lr *liveRun, p pendingInput, c *carrier) error {
	lr.qmu.Lock()
	lr.queue = append(lr.queue, p)
	if lr.draining {
		lr.qmu.Unlock()
		return <-p.done
	}
	lr.draining = true
	lr.qmu.Unlock()
	for {
		lr.qmu.Lock()
		batch := lr.queue
		lr.queue = nil
		if len(batch) == 0 {
			lr.draining = false
			lr.qmu.Unlock()
			break
		}
		lr.qmu.Unlock()
		if c != nil && c.w != nil {
			// More input arrived while the carried try waited: it starts now on a goroutine
			// of its own rather than after this batch's commit.
			go e.work(c.w)
			c.w = nil
		}
		e.applyBatch(lr, batch, c)
		// Let the activities the commit just launched run before taking the next batch: a fast
		// one reports at once and joins it, where taking the queue right away would commit it
		// alone and pay an fsync for it (for_each over 10,000 no-ops commits several times
		// less with it: docs/performance.md). A batch whose only try is carried yields too: the
		// yield costs a futex wake and wait, but a sequential step without it was 15–25 %
		// slower (docs/performance.md, "the drain's yield").
		runtime.Gosched()
	}
	return <-p.done
}

type pendingInput struct {
	ev   history.Event
	mark *history.Task // set for a dispatch mark instead of an event
	done chan error
}

// applyBatch applies queued inputs in order and commits everything they produced at once.
func (e *Engine) applyBatch(lr *liveRun, batch []pendingInput, c *carrier) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.carry = c
	defer func() { lr.carry = nil }()
	_ = e.ensure(lr) // an evicted run comes back (idle.go); one that cannot is blocked, which admit reports
	lr.lastUsed = e.clock.Now()
	// An input and the decisions it implies, usually one: room for the common batch at once.
	evs := make([]history.Event, 0, 2*len(batch))
	applied := make([]pendingInput, 0, len(batch))
	var marks []pendingInput
	for _, p := range batch {
		if err := e.admit(lr, p.ev); err != nil {
			p.done <- err
			continue
		}
		if p.mark != nil {
			marks = append(marks, p) // checked once the whole batch is applied
			continue
		}
		ev := p.ev
		if ev.Time.IsZero() {
			ev.Time = e.clock.Now()
		}
		if (isOutcome(ev.Type) || ev.Type == history.ActivityHeartbeatRecorded) && !lr.interp.Expects(ev.ActivityExecutionID, ev.Attempt) {
			if ev.Type != history.ActivityHeartbeatRecorded {
				e.stale.Add(1)
			}
			p.done <- nil // a superseded attempt (docs/reliability.md G5): never recorded
			continue
		}
		if ev.Type == history.SignalReceived {
			s, _ := history.DataOf[history.Signal](ev)
			if lr.interp.SeenSignal(s.SignalID) {
				p.done <- errDuplicateSignal // a resend of a signal already recorded: not recorded again
				continue
			}
			if !lr.interp.SignalRoom(s.Name) {
				p.done <- edgeErr(ErrSignalLimit, "signal %q to run %s: the run holds %d signals no step has taken yet, the limit; "+
					"this one was not recorded and the run goes on (send it again once a wait_for_signal step has taken some)",
					s.Name, lr.rec.RunID, interpreter.MaxSignals)
				continue
			}
		}
		// The seq commitRun will give it: the interpreter records it (SignalApplied names the
		// SignalReceived it took), and replay sees the committed seq, so live must too.
		ev.Seq = lr.rec.LastSeq + uint64(len(evs)) + 1
		decisions, err := lr.interp.Apply(ev)
		if err != nil {
			lr.blocked = err
			e.logf("wend: run %s blocked: %v", lr.rec.RunID, err)
			p.done <- fmt.Errorf("run %s: %w: %v", lr.rec.RunID, ErrBlocked, err)
			continue
		}
		evs = append(append(evs, ev), decisions...)
		applied = append(applied, p)
	}
	// A mark is written only for a try the run still awaits once this batch is applied, so a
	// try cancelled or superseded meanwhile is neither called nor put back in the store.
	var puts []history.Task
	for _, p := range marks {
		at, err := history.DataOf[activityTask](history.Event{Data: p.mark.Data})
		if err != nil || !lr.interp.Expects(at.ExecID, at.Attempt) {
			p.done <- errNotOwed
			continue
		}
		puts = append(puts, *p.mark)
		applied = append(applied, p)
	}
	var err error
	switch {
	case len(evs) > 0:
		err = e.commitRun(lr, evs, puts...)
	case len(puts) > 0:
		err = e.commitMarks(lr, puts)
	}
	for _, p := range applied {
		p.done <- err
	}
}

// admit says whether a run takes input now.
func (e *Engine) admit(lr *liveRun, ev history.Event) error {
	if err := e.isStopped(); err != nil {
		return err
	}
	if lr.blocked != nil {
		return fmt.Errorf("run %s: %w: %v", lr.rec.RunID, ErrBlocked, lr.blocked)
	}
	if !lr.rec.Open() || lr.interp.Closed() != "" {
		status := lr.rec.Status
		if lr.interp.Closed() != "" && lr.rec.Open() {
			status = "closing"
		}
		return fmt.Errorf("run %s is %s: %w", lr.rec.RunID, status, ErrRunClosed)
	}
	return nil
}

func isOutcome(t history.EventType) bool {
	return t == history.ActivityCompleted || t == history.ActivityAttemptFailed || t == history.ActivityTimedOut ||
		t == history.ActivityAttemptInterrupted
}

// commitRun numbers evs after the run's last event, commits them with their tasks (and the
// next run on continue-as-new), then acts on them. lr.mu is held.
// marks are dispatch marks (dispatch.go) written in the same commit.
func (e *Engine) commitRun(lr *liveRun, evs []history.Event, marks ...history.Task) error {
	rec := lr.rec
	for i := range evs {
		rec.LastSeq++
		evs[i].Seq = rec.LastSeq
	}
	var next *liveRun
	var nextEvs []history.Event
	e.keepSearch(lr, &rec)
	last := evs[len(evs)-1]
	if last.Type.Terminal() {
		rec.Status, rec.ClosedReason = history.ClosedBy(last)
		rec.ClosedAt = last.Time
	}
	c := history.Commit{Runs: []history.RunUpdate{{Run: rec, Events: evs}}, PutTasks: marks}
	tasksFor(rec, evs, lr.interp.Activity, &c)
	if last.Type == history.WorkflowContinuedAsNew {
		var err error
		next, nextEvs, err = e.continueAsNew(lr, last)
		if err != nil {
			e.logf("wend: run %s: continue-as-new: %v", rec.RunID, err)
		} else {
			c.Runs = append(c.Runs, history.RunUpdate{Run: next.rec, Events: nextEvs})
			tasksFor(next.rec, nextEvs, next.interp.Activity, &c)
		}
	}
	slots := e.reserveDispatch(&c, lr.w.Limits)
	failpoint.Hit("before-commit")
	if err := e.store.Commit(e.ctx, c); err != nil {
		slots.release(e)
		if storeRefused(err) {
			// The interpreter is past what the store holds: the run stops here, as a blocked
			// one does, and replays from its history when driven again. The engine goes on.
			lr.blocked = err
			e.logf("wend: run %s blocked: %v", rec.RunID, err)
			return fmt.Errorf("run %s: %w: %w", rec.RunID, ErrBlocked, err)
		}
		if e.isStopped() == nil {
			e.fatal(fmt.Errorf("commit run %s: %w", rec.RunID, err))
		}
		return err
	}
	for _, near := range lr.interp.NearLimits() {
		if !lr.warned[near.What] {
			if lr.warned == nil {
				lr.warned = map[string]bool{}
			}
			lr.warned[near.What] = true
			e.logf("wend: warning: run %s has %s (80%% of a structural limit; over it the step or run fails)", rec.RunID, near)
		}
	}
	lr.rec = rec
	failpoint.Hit("after-commit")
	e.effects(lr, evs, slots)
	if next != nil {
		next.mu.Lock()
		e.publish(next)
		e.effects(next, nextEvs, slots)
		next.mu.Unlock()
	}
	slots.release(e) // any a call did not take (none, unless its activity went away)
	return nil
}

// effects acts on committed events: calls, timers, children, waits, notifications.
// slots holds the MaxActivities slots reserved for the calls the commit marked dispatched.
func (e *Engine) effects(lr *liveRun, evs []history.Event, slots heldSlots) {
	for _, ev := range evs {
		if e.opts.Observe != nil {
			e.opts.Observe(lr.rec, ev)
		}
		switch ev.Type {
		case history.ActivityScheduled, history.ActivityRetryScheduled:
			e.scheduleActivityFrom(lr, ev, slots)
		case history.ActivityCancelled:
			e.cancelCall(taskIDOf(ev))
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](ev)
			e.sched.add(history.Task{ID: timerTaskID(lr.rec.RunID, ts.TimerID), RunID: lr.rec.RunID, Kind: history.TaskTimer,
				AvailableAt: ts.FireAt, Data: history.MustData(stepTask{RunID: lr.rec.RunID, Step: ev.Step, TimerID: ts.TimerID})})
		case history.TimerCancelled:
			ref, _ := history.DataOf[history.TimerRef](ev)
			e.sched.remove(timerTaskID(lr.rec.RunID, ref.TimerID))
		case history.ChildWorkflowCancelRequested:
			cr, _ := history.DataOf[history.CancelRequest](ev)
			e.goCancelChild(cr)
		case history.ChildWorkflowScheduled:
			cs, _ := history.DataOf[history.ChildSchedule](ev)
			trace := lr.interp.TraceParent()
			e.goStartChild(lr.rec, func() string { return trace }, ev.Step, cs)
		case history.WorkflowWaitScheduled:
			ws, _ := history.DataOf[history.WaitSchedule](ev)
			e.registerWait(ws.WorkflowID, waitRef{lr.rec.RunID, ev.Step})
		}
		if ev.Type.Terminal() {
			e.closed(lr)
		}
	}
}
