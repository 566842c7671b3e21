package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// RecoverReport says what Recover found.
type RecoverReport struct {
	Resumed int      // open runs driven again (Resume: registered; Recover: and replayed)
	Blocked []string // runs that could not be replayed, with why
	Tasks   int      // tasks re-armed (leases of the dead predecessor reclaimed)
	// Interrupted counts the tries a stopped process had handed to a plugin (marked
	// dispatched): each is recorded as ActivityAttemptInterrupted and redelivered as a new
	// attempt.
	Interrupted int
	// Repair is the repair run after the replay, as Watchdog runs it: tasks the histories of
	// open runs need but the store lacks (lost, or set aside as damaged) are rebuilt. Empty
	// from Resume, which repairs in the background.
	Repair RepairReport
}

// Recover resumes every open run and repairs before it returns: Resume, then the check of
// every run's tasks against its history that Resume leaves to the background (a run whose task was lost or damaged would otherwise wait for it for ever). Each
// open run is replayed once, with the spec text it recorded; a waiting run leaves memory again
// when the engine lets idle runs go. A run whose history no longer replays is reported in
// Blocked and not driven. The CLI's run, resume and repair use it.
func (e *Engine) Recover(ctx context.Context) (RecoverReport, error) {
	rep, err := e.resume(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Repair, err = e.repair("", true); err != nil {
		return rep, err
	}
	rep.settle()
	if n := len(rep.Repair.Rebuilt); n > 0 {
		e.logf("wend: rebuilt %d task(s) the histories need: %v", n, rep.Repair.Rebuilt)
	}
	return rep, nil
}

// settle folds the start's repair into the report: its blocked runs were not resumed, its
// rebuilt tries recorded interrupted count as interruptions.
func (rep *RecoverReport) settle() {
	rep.Blocked = append(rep.Blocked, rep.Repair.Blocked...)
	rep.Resumed -= len(rep.Repair.Blocked)
	rep.Interrupted += len(rep.Repair.Interrupted)
}

// Resume makes the engine ready over what a previous process left, without replaying the
// runs that only wait (start to ready stays short with 100,000 waiting runs). Every open run is
// registered from its record, out of memory as an idle run is (idle.go), and every task left
// in the store is taken back (this process holds the database lock, so no other worker owns
// them): timers and backoffs go to the scheduler's heap, due tries are called, waits and
// child starts are registered. A run is replayed only when it has something to do now: a try
// the stopped process had handed to a plugin is recorded interrupted, a child start may be
// owed; any other run is rebuilt by replay on its first input, as an evicted run is.
//
// What Resume leaves undone, it does in the background right after, as part of the engine
// (Close waits for it): every run not yet replayed is replayed once and its tasks checked
// against its history, as Recover does before it returns: lost and damaged tasks are rebuilt,
// runs whose history no longer replays are dropped, and a waiting run leaves memory again. Its
// report goes to Logf, and ResumeRepaired waits for it. wend serve starts with Resume.
func (e *Engine) Resume(ctx context.Context) (RecoverReport, error) {
	rep, err := e.resume(ctx)
	if err != nil {
		return rep, err
	}
	done := make(chan struct{})
	e.mu.Lock()
	e.resumeDone = done
	e.mu.Unlock()
	if !e.spawn(func() { e.repairResumed(done) }) {
		close(done)
	}
	return rep, nil
}

// repairResumed is Resume's background check (repair at start, over every open run).
func (e *Engine) repairResumed(done chan struct{}) {
	defer close(done)
	t0 := e.clock.Now()
	rep, err := e.repair("", true)
	if rep.Runs > 0 {
		returnRepairGarbage()
	}
	e.mu.Lock()
	e.resumeRepair, e.resumeErr = rep, err
	e.mu.Unlock()
	if err != nil {
		if e.isStopped() == nil {
			e.logf("wend: repair at start: %v", err)
		}
		return
	}
	for _, b := range rep.Blocked {
		e.logf("wend: not resuming run %s", b)
	}
	if n := len(rep.Rebuilt); n > 0 {
		e.logf("wend: rebuilt %d task(s) the histories need: %v", n, rep.Rebuilt)
	}
	if n := len(rep.Interrupted); n > 0 {
		e.logf("wend: redelivering %d activity call(s) whose task was lost (recorded as interrupted; each is a new attempt)", n)
	}
	if rep.Runs > 0 {
		e.logf("wend: checked the tasks of %d open run(s) against their histories in %s: %d rebuilt, %d blocked",
			rep.Runs, e.clock.Now().Sub(t0).Round(time.Millisecond), len(rep.Rebuilt), len(rep.Blocked))
	}
}

// returnRepairGarbage hands the memory the start's repair freed back to the system
// (debug.FreeOSMemory; a var for tests). The repair replays every open run once, a burst of
// garbage no steady state repeats, and the runtime keeps freed memory mapped for a while up to
// about twice the live heap (docs/performance.md, "Waiting runs").
var returnRepairGarbage = debug.FreeOSMemory

// ResumeRepaired waits until the repair Resume left to the background has ended and returns
// its report; at once, with an empty report, on an engine that did not Resume.
func (e *Engine) ResumeRepaired(ctx context.Context) (RepairReport, error) {
	e.mu.Lock()
	done := e.resumeDone
	e.mu.Unlock()
	if done == nil {
		return RepairReport{}, nil
	}
	select {
	case <-done:
	case <-ctx.Done():
		return RepairReport{}, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.resumeRepair, e.resumeErr
}

// resumeRepairing says whether Resume's background repair is still going.
func (e *Engine) resumeRepairing() bool {
	e.mu.Lock()
	done := e.resumeDone
	e.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// resume registers the open runs and re-arms the stored tasks: Resume without the repair.
func (e *Engine) resume(ctx context.Context) (RecoverReport, error) {
	var rep RecoverReport
	// The open runs' records and the stored tasks are two reads of their own, each of every
	// record of its kind: read at once, they take the longer one's time, not both.
	var tasks []history.Task
	var terr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		tasks, terr = e.store.Tasks()
	}()
	runs, err := e.store.Runs(history.RunFilter{Status: history.StatusRunning})
	<-read
	if err != nil {
		return rep, err
	}
	if d := (*history.DamagedTasksError)(nil); errors.As(terr, &d) {
		terr = nil // the repair reports them and rebuilds what the runs need
	}
	if terr != nil {
		return rep, terr
	}
	now := e.clock.Now()
	owesChild := map[string]bool{}
	for _, t := range tasks {
		if t.Kind == history.TaskChild {
			owesChild[t.RunID] = true
		}
	}
	lrs := make([]*liveRun, 0, len(runs))
	for _, rec := range runs {
		lr := &liveRun{dir: filepath.Dir(rec.SpecFile), workflowID: rec.WorkflowID, rec: rec, unread: true, lastUsed: now}
		if owesChild[rec.RunID] {
			// A child start may be owed: only a run whose history replays starts one.
			if err := e.ensure(lr); err != nil {
				rep.Blocked = append(rep.Blocked, fmt.Sprintf("%s (%s): %v", rec.RunID, rec.WorkflowID, err))
				continue
			}
		}
		lrs = append(lrs, lr)
	}
	e.publishAll(lrs)
	rep.Resumed = len(lrs)
	later := make([]*history.Task, 0, len(tasks)) // for the scheduler, added at once
	for i, t := range tasks {
		lr := e.live(t.RunID)
		if lr == nil {
			continue // its run is closed or blocked
		}
		rep.Tasks++
		if t.Kind == history.TaskActivity && t.Dispatched && !e.opts.Parked {
			if e.interrupted(lr, t) {
				rep.Interrupted++
				continue
			}
		}
		if e.scheduled(t) {
			later = append(later, &tasks[i])
			continue
		}
		lr.mu.Lock()
		rec := lr.rec
		lr.mu.Unlock()
		e.rearm(rec, t)
	}
	e.sched.addAll(later)
	for _, lr := range e.liveRuns("") {
		e.evictAtRecover(lr) // the runs replayed above that only wait
	}
	return rep, e.loadQueue(tasks)
}

// storedTasks reads the store's tasks. Damaged records are set aside: logged, counted
// (DamagedTasks) and returned apart, for Repair to rebuild what the history needs and drop the
// rest.
func (e *Engine) storedTasks() ([]history.Task, []history.DamagedTask, error) {
	tasks, err := e.store.Tasks()
	var d *history.DamagedTasksError
	if !errors.As(err, &d) {
		return tasks, nil, err
	}
	for _, t := range d.Damaged {
		e.logf("wend: %s; set aside: repair rebuilds it from its run's history", t.Problem)
	}
	e.damagedTasks.Add(int64(len(d.Damaged)))
	return tasks, d.Damaged, nil
}

// DamagedTasks counts the damaged task records set aside since the engine started.
func (e *Engine) DamagedTasks() int64 { return e.damagedTasks.Load() }

func (e *Engine) replay(rec history.Run) (*liveRun, error) {
	evs, err := e.store.Events(rec.RunID, 0)
	if err != nil {
		return nil, err
	}
	if ps := history.Check(rec, evs); len(ps) > 0 {
		return nil, fmt.Errorf("history check: %v", ps[0])
	}
	st, w, err := e.specs.started(evs[0])
	if err != nil {
		return nil, err
	}
	if moved, err := history.CurrentSpec(st, evs); err != nil {
		return nil, err
	} else if moved.SpecSHA256 != st.SpecSHA256 { // a moved run replays whole on its new text
		st = moved
		if w, err = e.specs.load(st); err != nil {
			return nil, err
		}
	}
	lr, err := replayWith(w, st, evs, true)
	if err != nil {
		return nil, err
	}
	lr.rec = rec
	lr.lastUsed = e.clock.Now()
	return lr, nil
}

// buildRun loads the spec text a run recorded and replays its events into a fresh state
// machine.
func (e *Engine) buildRun(st history.Started, evs []history.Event, decoded bool) (*liveRun, error) {
	st, err := history.CurrentSpec(st, evs)
	if err != nil {
		return nil, err
	}
	w, err := e.specs.load(st)
	if err != nil {
		return nil, err
	}
	return replayWith(w, st, evs, decoded)
}

// replayRun is buildRun, which needs nothing of an engine.
func replayRun(st history.Started, evs []history.Event, decoded bool) (*liveRun, error) {
	st, err := history.CurrentSpec(st, evs)
	if err != nil {
		return nil, err
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		return nil, fmt.Errorf("recorded spec no longer loads (was it written by a newer wend?):\n%s", ds.Error())
	}
	return replayWith(w, st, evs, decoded)
}

// scheduled says whether rearm hands t to the scheduler: a timer, or a try not due yet.
func (e *Engine) scheduled(t history.Task) bool {
	return t.Kind == history.TaskTimer || t.Kind == history.TaskActivity && t.AvailableAt.After(e.clock.Now())
}

// rearm puts a stored task back to work. rec is the run's record, read under its lock: the
// run may be committing meanwhile (a timer re-armed before fired at once), so lr.rec is not
// read here.
func (e *Engine) rearm(rec history.Run, t history.Task) {
	switch t.Kind {
	case history.TaskActivity, history.TaskTimer:
		if e.scheduled(t) {
			e.sched.add(t)
		} else {
			e.call(t)
		}
	case history.TaskChild, history.TaskWait:
		st, err := history.DataOf[stepTask](history.Event{Data: t.Data})
		if err != nil {
			e.logf("wend: task %s: %v", t.ID, err)
			return
		}
		if t.Kind == history.TaskChild {
			cs, _ := history.DataOf[history.ChildSchedule](history.Event{Data: st.Data})
			e.goStartChild(rec, e.recordedTrace(rec.RunID), st.Step, cs)
			return
		}
		ws, _ := history.DataOf[history.WaitSchedule](history.Event{Data: st.Data})
		e.registerWait(ws.WorkflowID, waitRef{rec.RunID, st.Step})
	}
}

// due runs a task whose time has come.
func (e *Engine) due(t history.Task) {
	switch t.Kind {
	case history.TaskActivity:
		e.call(t)
	case history.TaskTimer:
		st, err := history.DataOf[stepTask](history.Event{Data: t.Data})
		if err != nil {
			e.logf("wend: task %s: %v", t.ID, err)
			return
		}
		lr := e.live(st.RunID)
		if lr == nil {
			return
		}
		// Timers due together (100,000 in one second) go to their runs through a pool of at
		// most maxTimerDeliveries goroutines (timerfire.go): each firing may rebuild an
		// evicted run, and unbounded they would hold every one of those state machines at
		// once. The deliveries in flight still share commits.
		// The step the timer was scheduled at, so the history says which step it ends (empty
		// for the workflow's own deadlines).
		ev := history.Event{Type: history.TimerFired, Step: st.Step, Data: history.MustData(history.TimerRef{TimerID: st.TimerID})}
		e.fire(timerFiring{lr: lr, taskID: t.ID, ev: ev})
	}
}

// InterruptedReason is the reason Recover records in ActivityAttemptInterrupted.
const InterruptedReason = "the process making the try stopped before its outcome was recorded"

// interrupted records that the try of t, handed to a plugin by a process that stopped, was
// interrupted; the run answers with its redelivery as the next attempt (not counted against
// tries), which the commit launches. It says whether the interruption was recorded (a task
// of an attempt the run no longer awaits is dropped as a stale report is).
func (e *Engine) interrupted(lr *liveRun, t history.Task) bool {
	at, err := history.DataOf[activityTask](history.Event{Data: t.Data})
	if err != nil {
		e.logf("wend: task %s: %v", t.ID, err)
		return false
	}
	lr.mu.Lock()
	owed := e.ensure(lr) == nil && lr.interp.Expects(at.ExecID, at.Attempt)
	lr.mu.Unlock()
	if !owed {
		return false
	}
	ev := history.Event{Type: history.ActivityAttemptInterrupted, Step: at.Step, ActivityExecutionID: at.ExecID,
		Attempt: at.Attempt, Data: history.MustData(history.AttemptInterruption{Reason: InterruptedReason})}
	if err := e.deliver(lr, ev); err != nil {
		e.logf("wend: task %s: record interruption: %v", t.ID, err)
		return false
	}
	return true
}

// publishAll publishes the runs a start registers, under one hold of e.mu; the maps are made
// to their size first when they are empty (as at a start), not grown step by step.
func (e *Engine) publishAll(lrs []*liveRun) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.runs) == 0 && len(e.current) == 0 {
		e.runs, e.current = make(map[string]*liveRun, len(lrs)), make(map[string]string, len(lrs))
	}
	for _, lr := range lrs {
		e.publishLocked(lr)
	}
}
