package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
)

// RepairReport says what Repair rebuilt.
type RepairReport struct {
	Runs    int      // runs examined
	Rebuilt []string // "run-id: task-id" for every task recreated
	Dropped []string // keys of damaged task records deleted: no open run's history needs them
	// Interrupted lists the rebuilt tries (as Rebuilt) that a start's repair recorded as
	// interrupted instead of running again: they may have reached a plugin before their
	// record was lost.
	Interrupted []string
	// Blocked lists the runs a start's repair replayed for the first time and found not to
	// replay ("RUNID (WORKFLOW ID): why"): they are not driven.
	Blocked []string
	// Skipped counts the runs that committed during every round of the repair: the next
	// repair checks them.
	Skipped int
	// Indexes lists what a repair of every run changed in the store's indexes
	// (history.IndexRepairer), a line per entry.
	Indexes []string
}

// expectedTasks are the tasks a run's open work needs, derived from its replayed state.
func expectedTasks(lr *liveRun) []history.Task {
	var out []history.Task
	for _, w := range lr.interp.Pending() {
		switch w.Kind {
		case history.TaskActivity:
			ev := history.Event{Step: w.Step, ActivityExecutionID: w.ExecID, Attempt: w.Attempt, Time: w.At}
			out = append(out, activityTaskOf(lr.rec, ev, w.Schedule, nil))
		case history.TaskTimer:
			out = append(out, history.Task{ID: timerTaskID(lr.rec.RunID, w.TimerID), RunID: lr.rec.RunID, Kind: history.TaskTimer,
				AvailableAt: w.At, Data: history.MustData(stepTask{RunID: lr.rec.RunID, Step: w.Step, TimerID: w.TimerID})})
		default:
			out = append(out, history.Task{ID: stepTaskID(lr.rec.RunID, w.Step), RunID: lr.rec.RunID, Kind: w.Kind,
				AvailableAt: w.At, Data: history.MustData(stepTask{RunID: lr.rec.RunID, Step: w.Step, Data: w.Data})})
		}
	}
	return out
}

// neededTasks are the tasks the store must hold for a run: expectedTasks but the start task of
// a run_workflow child that is running. The child's start deletes that task (the outcome comes
// from the child when it closes, not from a task), so while the child runs the store rightly
// lacks it; counting it as lost made every repair rebuild it and record RepairRequested in the
// parent, and wend check report it. A child that has closed while its parent still waits keeps
// needing it: the rebuilt task delivers the outcome a crash cut off (startChild's bookkeeping).
func neededTasks(store history.Store, lr *liveRun) []history.Task {
	var out []history.Task
	for _, t := range expectedTasks(lr) {
		if t.Kind == history.TaskChild && childRunning(store, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// childRunning says whether the child a child task starts has a run that is open.
func childRunning(store history.Store, t history.Task) bool {
	st, err := history.DataOf[stepTask](history.Event{Data: t.Data})
	if err != nil {
		return false
	}
	cs, err := history.DataOf[history.ChildSchedule](history.Event{Data: st.Data})
	if err != nil || cs.WorkflowID == "" {
		return false
	}
	runs, err := store.Runs(history.RunFilter{WorkflowID: cs.WorkflowID})
	if err != nil {
		return false // counted as needed: a repair rebuilds it, and startChild finds the child
	}
	for _, r := range runs {
		if r.Open() {
			return true
		}
	}
	return false
}

// Repair recreates tasks that the history says must exist but the store lacks, for one
// workflow id or (workflowID "") every open run. It never touches a task that exists, so
// an activity that is running is never started twice by it; a repaired run records
// RepairRequested so the history shows it. A task stored under the id but for another run or
// of another kind counts as lacking, as does a damaged task record: the
// rebuilt task replaces it, and one left over (its key damaged too) is deleted after a repair
// of every run.
func (e *Engine) Repair(ctx context.Context, workflowID string) (rep RepairReport, err error) {
	return e.repair(workflowID, false)
}

// repair is Repair; atStart is set when Recover or Resume calls it, before this process has
// handed any try of the run's lost tasks to a plugin: a lost activity task whose try may have
// reached a plugin under the process that stopped is then rebuilt marked dispatched and
// recorded interrupted, as a marked task is, so the re-run gets a new attempt and attempt id.
//
// It runs beside runs that take input. The stored tasks are read once a round, after the
// runs' sequence numbers: a run that committed in between (its tasks changed) is looked at
// again in a further round with a fresh read, at most repairRounds in all, and left to the
// next repair after that, never rebuilt from a stale read (which would rebuild a task just
// committed, dispatch mark and all, and call its try twice).
func (e *Engine) repair(workflowID string, atStart bool) (rep RepairReport, err error) {
	if workflowID == "" {
		// The indexes first: the runs a filter lists (cancel --where, a batch) are read
		// through them.
		if ir, ok := e.store.(history.IndexRepairer); ok {
			if rep.Indexes, err = ir.RepairIndexes(); err != nil {
				return rep, err
			}
		}
	}
	runs := e.liveRuns(workflowID)
	rep.Runs = len(runs)
	rebuilt := map[string]bool{}
	var damaged []history.DamagedTask
	for round := 0; round < repairRounds && len(runs) > 0; round++ {
		if runs, damaged, err = e.repairRound(runs, atStart, rebuilt, &rep); err != nil {
			return rep, err
		}
	}
	rep.Skipped = len(runs)
	if workflowID == "" && len(runs) == 0 {
		// Every open run was checked against one read: a damaged record none needs is garbage.
		err = e.dropDamaged(damaged, rebuilt, &rep)
	}
	return rep, err
}

// repairRounds bounds the rounds of a repair over runs that keep committing.
const repairRounds = 3

// repairRound is one read of the stored tasks and a check of runs against it; it returns the
// runs that committed since their sequence numbers were taken, for another round.
func (e *Engine) repairRound(runs []*liveRun, atStart bool, rebuilt map[string]bool, rep *RepairReport) (moved []*liveRun, damaged []history.DamagedTask, err error) {
	seqs := make([]uint64, len(runs))
	for i, lr := range runs {
		lr.mu.Lock()
		seqs[i] = lr.rec.LastSeq
		lr.mu.Unlock()
	}
	stored, damaged, err := e.storedTasks()
	if err != nil {
		return nil, nil, err
	}
	have := make(map[string]history.Task, len(stored))
	for _, t := range stored {
		have[t.ID] = t
	}
	for i, lr := range runs {
		if err := e.isStopped(); err != nil {
			return nil, nil, err // a background repair at Close
		}
		lr.mu.Lock()
		if lr.rec.LastSeq != seqs[i] {
			lr.mu.Unlock()
			moved = append(moved, lr)
			continue
		}
		missing := e.missingTasks(lr, have, rep)
		if len(missing) == 0 {
			lr.mu.Unlock()
			continue
		}
		for i, t := range missing {
			missing[i].Dispatched = atStart && e.possiblyDispatched(lr, t)
		}
		err = e.commitRepair(lr, missing)
		rec := lr.rec // lr.rec is rewritten by each commit of the run: read it locked
		lr.mu.Unlock()
		runID := rec.RunID
		if err != nil {
			return nil, nil, err
		}
		for _, t := range missing {
			rebuilt[t.ID] = true
			rep.Rebuilt = append(rep.Rebuilt, runID+": "+t.ID)
			if t.Dispatched && e.interrupted(lr, t) {
				rep.Interrupted = append(rep.Interrupted, runID+": "+t.ID)
				continue
			}
			e.rearm(rec, t)
		}
	}
	return moved, damaged, nil
}

// missingTasks returns the tasks a run's history needs that have lacks. It replays a run out
// of memory only when it must: one Resume registered unread, or an evicted one whose needs
// have lacks; a run it replayed that needs nothing leaves memory again if the engine lets
// idle runs go. A run Resume registered whose history does not replay is dropped and
// reported in rep.Blocked. lr.mu is held.
func (e *Engine) missingTasks(lr *liveRun, have map[string]history.Task, rep *RepairReport) []history.Task {
	if !lr.rec.Open() {
		return nil // closed since the list was taken
	}
	if lr.interp == nil && !lr.unread && lr.blocked == nil && needsMet(lr.needs, lr.rec.RunID, have) {
		return nil // evicted, and the store holds what it needs: no replay (idle.go)
	}
	wasOut := lr.interp == nil
	if err := e.ensure(lr); err != nil {
		if lr.unread { // never driven in this process: not resumed, as Recover reported it
			rep.Blocked = append(rep.Blocked, fmt.Sprintf("%s (%s): %v", lr.rec.RunID, lr.workflowID, err))
			e.unpublish(lr)
		}
		return nil // blocked: no tasks to rebuild for a run that is not driven
	}
	var missing []history.Task
	for _, t := range neededTasks(e.store, lr) {
		// A task stored for another run or of another kind is damage (a legacy record,
		// written without a checksum): the run would wait for ever for it.
		if got, ok := have[t.ID]; !ok || got.RunID != t.RunID || got.Kind != t.Kind {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 && wasOut && e.evicts() && e.evictable(lr) {
		e.evict(lr) // as it was: a check does not make a waiting run resident
	}
	return missing
}

// dropDamaged deletes the damaged task records a repair of every run did not replace: no open
// run's history needs a task under that key.
func (e *Engine) dropDamaged(damaged []history.DamagedTask, rebuilt map[string]bool, rep *RepairReport) error {
	var c history.Commit
	for _, d := range damaged {
		if !rebuilt[d.Key] {
			c.DeleteTasks = append(c.DeleteTasks, d.Key)
		}
	}
	if len(c.DeleteTasks) == 0 {
		return nil
	}
	if err := e.store.Commit(e.ctx, c); err != nil {
		e.fatal(fmt.Errorf("commit the deletion of damaged tasks: %w", err))
		return err
	}
	rep.Dropped = c.DeleteTasks
	e.logf("wend: deleted %d damaged task record(s) no run needs: %q", len(c.DeleteTasks), c.DeleteTasks)
	return nil
}

// commitRepair records RepairRequested with the recreated tasks; lr.mu is held.
func (e *Engine) commitRepair(lr *liveRun, missing []history.Task) error {
	ev := history.Event{Type: history.RepairRequested, Time: e.clock.Now(), Seq: lr.rec.LastSeq + 1}
	if _, err := lr.interp.Apply(ev); err != nil {
		return err
	}
	rec := lr.rec
	rec.LastSeq++
	c := history.Commit{Runs: []history.RunUpdate{{Run: rec, Events: []history.Event{ev}}}, PutTasks: missing}
	if err := e.store.Commit(e.ctx, c); err != nil {
		e.fatal(fmt.Errorf("commit repair of run %s: %w", rec.RunID, err))
		return err
	}
	lr.rec = rec
	return nil
}

func (e *Engine) liveRuns(workflowID string) []*liveRun {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*liveRun
	if workflowID == "" {
		out = make([]*liveRun, 0, len(e.runs))
	}
	for _, lr := range e.runs {
		if workflowID == "" || lr.workflowID == workflowID {
			out = append(out, lr)
		}
	}
	return out
}

// Watchdog repairs every open run at each interval until the engine stops, so a task lost to
// a bug or a hand-edited database does not leave a run stuck forever.
func (e *Engine) Watchdog(interval time.Duration) {
	var tick func()
	tick = func() {
		if e.isStopped() != nil {
			return
		}
		if e.resumeRepairing() {
			e.clock.AfterFunc(interval, tick) // the start's repair is going through every run
			return
		}
		if rep, err := e.Repair(e.ctx, ""); err != nil {
			e.logf("wend: watchdog: %v", err)
		} else {
			if len(rep.Rebuilt) > 0 {
				e.logf("wend: watchdog rebuilt %d task(s): %v", len(rep.Rebuilt), rep.Rebuilt)
			}
			if len(rep.Indexes) > 0 {
				e.logf("wend: watchdog repaired %d index entries: %v", len(rep.Indexes), rep.Indexes)
			}
		}
		e.clock.AfterFunc(interval, tick)
	}
	e.clock.AfterFunc(interval, tick)
}

// Retry resumes the failed last run of a workflow id from its failed activity: a new run
// under the same workflow id gets the failed run's history up to that activity's last try,
// then a new series of tries for it (RetryRequested). Completed steps are not run again and
// the activity keeps its activity_execution_id. A run whose compensations ran, or that
// failed other than by an activity, cannot be retried.
func (e *Engine) Retry(ctx context.Context, workflowID string) (history.Run, error) {
	runs, err := e.store.Runs(history.RunFilter{WorkflowID: workflowID})
	if err != nil {
		return history.Run{}, err
	}
	if len(runs) == 0 {
		return history.Run{}, fmt.Errorf("retry %s: no such workflow: %w", workflowID, history.ErrNotFound)
	}
	old := runs[0]
	if old.Status == history.StatusQueued {
		return history.Run{}, refused("retry %s: run %s is queued under its workflow's concurrency key, not failed (wend show %s says for what)", workflowID, old.RunID, workflowID)
	}
	if old.Status != history.StatusFailed || old.ClosedReason == history.ClosedTimedOut {
		return history.Run{}, refused("retry %s: run %s is %s (%s); only failed runs can be retried", workflowID, old.RunID, old.Status, old.ClosedReason)
	}
	evs, err := e.store.Events(old.RunID, 0)
	if err != nil {
		return history.Run{}, err
	}
	plan, err := interpreter.PlanRetry(old.RunID, evs)
	switch {
	case errors.Is(err, interpreter.ErrRetryCompensated):
		return history.Run{}, refused("retry %s: run %s was compensated after it failed; its completed steps were undone, so it cannot resume", workflowID, old.RunID)
	case errors.Is(err, interpreter.ErrRetryNoActivity):
		return history.Run{}, refused("retry %s: run %s did not fail in an activity (see wend show %s); retry resumes only from a failed activity", workflowID, old.RunID, workflowID)
	case err != nil:
		return history.Run{}, err
	}
	plan.Started.RunID = e.opts.NewID()
	queued, giveBack, err := e.retrySlot(ctx, old, plan.Started)
	if err != nil || queued != nil {
		return queuedOrZero(queued), err
	}
	rec, err := e.retryFrom(ctx, old, plan, nil)
	if err != nil {
		giveBack()
	}
	return rec, err
}

// retrySlot makes a retry of a keyed workflow take a slot of its key like a start, or queues
// it (the queued task's payload carries st, whose RetryOf names the failed run the dequeued
// start plans from again). A for_each shard is not keyed, as at start.
func (e *Engine) retrySlot(ctx context.Context, old history.Run, st history.Started) (queued *history.Run, giveBack func(), err error) {
	giveBack = func() {}
	if st.Shard != nil {
		return nil, giveBack, nil
	}
	w, err := e.specs.load(st)
	if err != nil {
		return nil, nil, fmt.Errorf("retry %s: %w", old.WorkflowID, err)
	}
	if w.Concurrency == nil {
		return nil, giveBack, nil
	}
	queued, release, err := e.slotOrQueue(ctx, w, st)
	if err != nil {
		return nil, nil, fmt.Errorf("retry %s: %w", old.WorkflowID, err)
	}
	if release != nil {
		giveBack = release
	}
	return queued, giveBack, nil
}

func queuedOrZero(r *history.Run) history.Run {
	if r == nil {
		return history.Run{}
	}
	return *r
}

// startRetryDequeued commits a queued retry's start: the failed run's history is planned from
// again (it is closed, so the plan is the one Retry made) and the queued task goes in the
// same commit.
func (e *Engine) startRetryDequeued(qs *queuedStart) error {
	st := qs.Started
	old, err := e.store.Run(st.RetryOf)
	if err != nil {
		return fmt.Errorf("retry %s: the failed run %s: %w", st.WorkflowID, st.RetryOf, err)
	}
	evs, err := e.store.Events(old.RunID, 0)
	if err != nil {
		return err
	}
	plan, err := interpreter.PlanRetry(old.RunID, evs)
	if err != nil {
		return fmt.Errorf("retry %s: %w", st.WorkflowID, err)
	}
	plan.Started.RunID = st.RunID
	_, err = e.retryFrom(e.ctx, old, plan, qs)
	return err
}

// refusal is Retry's answer for a run it cannot resume: its text explains why in full, and it
// matches ErrNotRetryable so callers (the server's 409) can tell it from a store failure.
type refusal string

func (r refusal) Error() string { return string(r) }

func (refusal) Is(target error) bool { return target == ErrNotRetryable }

func refused(format string, args ...any) error { return refusal(fmt.Sprintf(format, args...)) }

// retryFrom commits the retry run plan.Started.RunID. queued, when set, is the queued retry
// that left the queue: the signals it took are recorded and its task deleted in the commit.
func (e *Engine) retryFrom(ctx context.Context, old history.Run, plan interpreter.RetryPlan, queued *queuedStart) (history.Run, error) {
	st, prefix, execID := plan.Started, plan.Prefix, plan.ActivityExecID
	lr, copied, err := e.replayCopy(old, st, prefix)
	if err != nil {
		return history.Run{}, fmt.Errorf("retry %s: %w", old.WorkflowID, err)
	}
	now := e.clock.Now()
	in := history.Event{Type: history.RetryRequested, Time: now,
		Data: history.MustData(history.RetryRequest{ActivityExecID: execID, RetryOf: old.RunID})}
	decisions, err := lr.interp.Apply(in)
	if err != nil {
		return history.Run{}, fmt.Errorf("retry %s: %w", old.WorkflowID, err)
	}
	evs := append(append(copied, in), decisions...)
	var deletes []string
	unlockQueue := func() {}
	if queued != nil {
		e.queue.mu.Lock() // until the commit: see runqueue_signal.go
		var once sync.Once
		unlockQueue = func() { once.Do(e.queue.mu.Unlock) }
		defer unlockQueue()
		if evs, err = e.sealLocked(lr, evs, queued); err != nil {
			return history.Run{}, fmt.Errorf("retry %s: %w", old.WorkflowID, err)
		}
		deletes = []string{queuedTaskID(st.RunID)}
	}
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	lr.rec.LastSeq = uint64(len(evs))
	e.keepSearch(lr, &lr.rec)
	c := history.Commit{Runs: []history.RunUpdate{{Run: lr.rec, Events: evs}}, PutTasks: expectedTasks(lr), DeleteTasks: deletes}
	e.mu.Lock()
	if err := e.store.Commit(ctx, c); err != nil {
		e.mu.Unlock()
		if storeRefused(err) {
			return history.Run{}, fmt.Errorf("retry %s: %w", old.WorkflowID, err)
		}
		e.fatal(fmt.Errorf("commit retry run: %w", err))
		return history.Run{}, err
	}
	if queued != nil {
		delete(e.queue.leaving, old.WorkflowID)
	}
	unlockQueue()
	lr.mu.Lock()
	e.publishLocked(lr)
	e.mu.Unlock()
	for _, t := range c.PutTasks {
		e.rearm(lr.rec, t) // lr.mu is held
	}
	if e.opts.Observe != nil {
		for _, ev := range evs[len(copied):] { // RetryRequested and what followed it
			e.opts.Observe(lr.rec, ev)
		}
	}
	rec := lr.rec
	lr.mu.Unlock()
	return rec, nil
}

// replayCopy builds the retry run's state by replaying the failed run's prefix under the new
// WorkflowStarted payload.
func (e *Engine) replayCopy(old history.Run, st history.Started, prefix []history.Event) (*liveRun, []history.Event, error) {
	evs := append([]history.Event(nil), prefix...)
	evs[0].Data = history.MustData(st) // its time stays: decisions after it were timed by it
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	lr, err := e.buildRun(st, evs, false) // evs[0] holds st re-encoded: decode it as a replay would
	if err != nil {
		return nil, nil, err
	}
	lr.rec = history.Run{WorkflowID: old.WorkflowID, RunID: st.RunID, Name: old.Name, Status: history.StatusRunning,
		SpecFile: old.SpecFile, SpecSHA256: old.SpecSHA256, ParentRunID: old.ParentRunID, ParentStep: old.ParentStep,
		StartedAt: e.clock.Now(), LastSeq: uint64(len(evs))}
	return lr, evs, nil
}

// possiblyDispatched says whether the try of t, an activity task the store lost, may have
// reached a plugin before the loss: it was due when the run last recorded an event, so a
// process driving the run was there to hand it over. Its dispatch mark, if it had one, was
// lost with it; at-least-once asks to assume it. lr.mu is held.
func (e *Engine) possiblyDispatched(lr *liveRun, t history.Task) bool {
	if t.Kind != history.TaskActivity || e.opts.Parked || lr.rec.LastSeq == 0 {
		return false
	}
	evs, err := e.store.Events(lr.rec.RunID, lr.rec.LastSeq-1)
	if err != nil || len(evs) == 0 {
		return false
	}
	return !t.AvailableAt.After(evs[len(evs)-1].Time)
}
