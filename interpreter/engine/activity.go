package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/failpoint"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

func taskIDOf(ev history.Event) string { return interpreter.TaskID(ev.ActivityExecutionID, ev.Attempt) }

// scheduleActivityFrom turns a committed ActivityScheduled / ActivityRetryScheduled into a call,
// now or when its backoff ends. slots holds the MaxActivities slots the commit reserved for
// the tries it marked dispatched (dispatch.go).
func (e *Engine) scheduleActivityFrom(lr *liveRun, ev history.Event, slots heldSlots) {
	a, ok := lr.interp.Activity(ev.ActivityExecutionID)
	if !ok {
		return
	}
	var rs *history.RetrySchedule
	if ev.Type == history.ActivityRetryScheduled {
		r, _ := history.DataOf[history.RetrySchedule](ev)
		rs = &r
		ev.Attempt = r.NextAttempt
	}
	at, avail := activityTaskData(lr.rec, ev, a, rs)
	id := interpreter.TaskID(at.ExecID, at.Attempt)
	held := slots.take(id)
	if !held && avail.After(e.clock.Now()) {
		e.sched.add(storedActivityTask(at, avail))
		return
	}
	t := history.Task{ID: id, RunID: at.RunID, Kind: history.TaskActivity, AvailableAt: avail, Dispatched: held}
	e.launch(t, at, held, limitOf(lr, at), lr.carry)
}

// call runs one activity task in its own goroutine and delivers the outcome to the run.
func (e *Engine) call(t history.Task) {
	at, err := history.DataOf[activityTask](history.Event{Data: t.Data})
	if err != nil {
		e.logf("wend: task %s: %v", t.ID, err)
		return
	}
	e.launch(t, at, false, lookupLimit, nil)
}

// tryWork is a launched try: counted in e.wg and cancellable through e.inflight, to be run by
// a goroutine of its own or by a carrier's.
type tryWork struct {
	ctx  context.Context
	t    history.Task
	at   activityTask
	held bool        // a MaxActivities slot is reserved for it
	lim  *spec.Limit // the limit its workflow declares on its activity (limits.go); nil: none
}

// carrier keeps one try that a run's drain launched for the goroutine draining it, which runs
// it once the run's queue is empty instead of starting a goroutine for it. Only a goroutine
// that is done otherwise carries: one whose try just reported (report). A sequential step's
// next try then starts where the last one's outcome was committed, with no hand-off to a new
// goroutine and no new stack to grow (docs/performance.md). lr.mu guards w while the drain
// applies a batch; the draining goroutine alone reads it afterwards.
type carrier struct{ w *tryWork }

// launch is call with the task's payload already decoded (the common path: the payload was
// built in this process moments ago). held says a MaxActivities slot is already reserved for
// it. A try not yet marked dispatched is marked before its call (dispatch.go), unless the
// engine is parked. lim is the activity's limit the try waits for first, if any (lookupLimit:
// the try looks it up on its own goroutine, for a caller that may hold the run's lock). c, when not
// nil and empty, takes the try instead of a new goroutine.
//
// The try's context is not a child of the engine's: a child registers with its parent, under
// the parent's lock, at every try and again at its end, and every try of the engine shares
// that lock. It is registered in e.inflight instead, which stopping the engine cancels whole
// (cancelInflight).
func (e *Engine) launch(t history.Task, at activityTask, held bool, lim *spec.Limit, c *carrier) {
	ctx, cancel := context.WithCancel(context.Background())
	e.mu.Lock()
	if e.stopped != nil {
		e.mu.Unlock()
		cancel()
		if held {
			<-e.sem
		}
		return
	}
	e.inflight[t.ID] = cancel
	e.wg.Add(1)
	e.mu.Unlock()
	w := &tryWork{ctx: ctx, t: t, at: at, held: held, lim: lim}
	if c != nil && c.w == nil {
		c.w = w
		return
	}
	go e.work(w)
}

// work runs w, then each try its reports left it to carry, on the calling goroutine.
func (e *Engine) work(w *tryWork) {
	e.workOn(new(worker), w)
}

// workOn is work on k, the goroutine's worker.
func (e *Engine) workOn(k *worker, w *tryWork) {
	for w != nil {
		w = e.runTry(k, w)
	}
}

// worker is what a goroutine running tries keeps from one report to the next: the carrier the
// run's drain leaves a try in, and the channel its own input's answer comes back on (each
// answered once and read once per report, so it is empty again after one). A sequential run's
// steps, all on one goroutine, make neither again at each step.
type worker struct {
	c    carrier
	done chan error
}

// runTry takes w's limit, slot and dispatch mark if it has none yet, makes the call and
// reports it; it returns the try the report left it to carry, if any. The limit comes first:
// a try waiting on its activity's limit must not hold a slot other activities could use.
func (e *Engine) runTry(k *worker, w *tryWork) *tryWork {
	defer e.wg.Done()
	ctx, t, at, taskID := w.ctx, w.t, w.at, w.t.ID
	if !w.held {
		if w.lim == lookupLimit { // launched from a stored task, maybe under the run's lock
			w.lim = e.lookupLimit(at)
		}
		if w.lim != nil && !e.acquireLimit(ctx, at.Plugin+"."+at.Activity, taskID, w.lim) {
			e.cancelCall(taskID)
			return nil
		}
		if !e.takeSlot(ctx) {
			e.releaseLimit(taskID)
			e.cancelCall(taskID)
			return nil
		}
	}
	if !t.Dispatched && !e.opts.Parked {
		if t.Data == nil {
			t.Data = history.MustData(at)
		}
		if err := e.markDispatched(t, at.RunID); err != nil {
			e.release(taskID)
			return nil // not awaited any more, or the engine is stopping: no call
		}
	}
	if ctx.Err() != nil {
		e.release(taskID)
		return nil
	}
	return e.try(ctx, k, taskID, at)
}

// try makes one call, on the calling goroutine, with the step's timeouts, and reports its
// outcome to the run. The try ends for the engine at whichever comes first, the call's return
// or a timeout; at a timeout it ends at once, whether or not the plugin stops, so a hung call
// holds neither the run nor a slot of MaxActivities. If the call reports later anyway, that is
// a superseded attempt's report: dropped and counted. (The call is made on this goroutine, not
// on one of its own beside the timers: a timeout needs no result handed over to end the try.)
// It returns the try the report left this goroutine to carry, if any.
func (e *Engine) try(ctx context.Context, k *worker, taskID string, at activityTask) *tryWork {
	call := e.callOf(at)                         // once for Prepare and the call: one visit to the run's lock
	if err := e.prepare(ctx, call); err != nil { // before the timers: see Preparer
		cancelled := ctx.Err() != nil
		e.release(taskID)
		if cancelled {
			return nil
		}
		return e.report(k, at.RunID, outcomeEvent(at, callResult{err: err}))
	}
	call.Deadline = e.deadline(at) // the try's time starts once its plugin is ready
	e.limitCallStarted(taskID)     // and a rate counts it from now (limits.go)
	s := &tryState{e: e, taskID: taskID, at: at}
	s.t.start(e.clock, at, s)
	out, err := e.execute(ctx, call, s.heartbeat, s.served)
	s.t.stop()
	failpoint.Hit("after-call")
	res := callResult{out, err, buildOf(&s.build)}
	if !s.ended.CompareAndSwap(false, true) {
		e.lateReport(ctx, at, res)
		return nil
	}
	cancelled := ctx.Err() != nil // by the engine: only a timeout cancels after ended is set
	e.release(taskID)
	if cancelled {
		return nil // cancelled, or shutting down: the task stays and runs again after a restart
	}
	return e.report(k, at.RunID, outcomeEvent(at, res))
}

// release ends a try's hold: its call is cancelled, its slot of MaxActivities and its
// activity's limit freed.
func (e *Engine) release(taskID string) {
	e.cancelCall(taskID)
	<-e.sem
	e.releaseLimit(taskID)
}

// tryState is what a try's call, its timers and its heartbeats share: one allocation for what
// were a closure or a variable each, on every step's path.
type tryState struct {
	e      *Engine
	taskID string
	at     activityTask
	ended  atomic.Bool            // the try is over for the engine: the call returned or a timer fired
	build  atomic.Pointer[string] // the plugin build serving the try, once known
	t      tryTimers

	hbMu   sync.Mutex
	hbLast time.Time // when progress was last recorded
}

// expire ends the try at a timeout, unless the call returned first.
func (s *tryState) expire(why string) {
	if !s.ended.CompareAndSwap(false, true) {
		return // the call returned first
	}
	e, at := s.e, s.at
	e.release(s.taskID) // cancels the call: the plugin is told to stop
	e.wg.Add(1)         // this try's goroutine is still in the call, so the group is not done
	go func() {
		defer e.wg.Done()
		k := new(worker)
		e.workOn(k, e.report(k, at.RunID, timedOutEvent(at, why, buildOf(&s.build))))
	}()
}

func (s *tryState) served(sha string) { s.build.Store(&sha) }

// heartbeat re-arms the heartbeat timeout and records the progress in the history at most once
// per HeartbeatEvery, in the background, so a chatty plugin never waits on a commit.
func (s *tryState) heartbeat(hb history.Heartbeat) {
	s.t.heartbeat()
	if len(hb.Progress) == 0 || !json.Valid(hb.Progress) {
		return
	}
	e, at := s.e, s.at
	now := e.clock.Now()
	s.hbMu.Lock()
	if !s.hbLast.IsZero() && now.Sub(s.hbLast) < HeartbeatEvery {
		s.hbMu.Unlock()
		return
	}
	s.hbLast = now
	s.hbMu.Unlock()
	lr := e.live(at.RunID)
	if lr == nil {
		return
	}
	ev := history.Event{Type: history.ActivityHeartbeatRecorded, Step: at.Step, ActivityExecutionID: at.ExecID,
		Attempt: at.Attempt, Data: history.MustData(history.HeartbeatRecord(hb))}
	e.spawn(func() {
		_ = e.deliver(lr, ev)
	})
}

// report hands an outcome to its run, unless the engine is stopping or the run is gone. The
// caller's goroutine, whose worker is k, is done otherwise: it carries a try the outcome's
// commit launches, which report returns for it to run (carrier).
func (e *Engine) report(k *worker, runID string, ev *history.Event) *tryWork {
	if e.isStopped() != nil {
		return nil
	}
	lr := e.live(runID)
	if lr == nil {
		return nil
	}
	if k.done == nil {
		k.done = make(chan error, 1)
	}
	_ = e.enqueue(lr, pendingInput{ev: *ev, done: k.done}, &k.c)
	w := k.c.w
	k.c.w = nil
	return w
}

type callResult struct {
	out   json.RawMessage
	err   error
	build string // sha256 of the plugin build that served the try; "" when unknown
}

// execute makes the call, through ExecuteBuild when the Activities names builds.
func (e *Engine) execute(ctx context.Context, call history.ActivityCall, hb func(history.Heartbeat), served func(string)) (json.RawMessage, error) {
	if b, ok := e.opts.Activities.(BuildActivities); ok {
		return b.ExecuteBuild(ctx, call, hb, served)
	}
	return e.opts.Activities.Execute(ctx, call, hb)
}

func buildOf(p *atomic.Pointer[string]) string {
	if s := p.Load(); s != nil {
		return *s
	}
	return ""
}

// lateReport hands the result of a timed-out call that ended anyway (not the plugin giving up
// on cancellation) to the run, which drops it as superseded and counts it.
func (e *Engine) lateReport(ctx context.Context, at activityTask, res callResult) {
	if res.err != nil && ctx.Err() != nil {
		return
	}
	if e.isStopped() != nil {
		return
	}
	lr := e.live(at.RunID)
	if lr == nil {
		e.stale.Add(1) // the run has moved on and closed: the report is dropped all the same
		return
	}
	_ = e.deliver(lr, *outcomeEvent(at, res))
}

// callOf builds the plugin call of a task, its deadline counted from now.
func (e *Engine) callOf(at activityTask) history.ActivityCall {
	call := history.ActivityCall{Plugin: at.Plugin, Activity: at.Activity, Input: at.Input, WorkflowID: at.WorkflowID,
		RunID: at.RunID, StepPath: at.Step, ActivityExecutionID: at.ExecID,
		ActivityAttemptID: interpreter.AttemptID(at.ExecID, at.Attempt), Attempt: at.Attempt, Deadline: e.deadline(at)}
	if lr := e.live(at.RunID); lr != nil {
		lr.mu.Lock()
		if e.ensure(lr) == nil {
			call.Declared = pluginRef(lr, at.Plugin)
			call.Secrets = interpreter.SecretRefs(lr.w, lr.dir)
			call.SecretPlaces = lr.interp.SecretPlaces(at.ExecID)
			call.LastProgress = lr.interp.LastProgress(at.ExecID)
			if tp := lr.interp.TraceParent(); tp != "" || e.opts.TraceContext {
				if lr.trace.TraceID == ([16]byte{}) { // a valid trace id is never zero
					lr.trace, _ = tracecontext.ForRun(at.RunID, tp)
				}
				call.TraceParent = tracecontext.TryOf(lr.trace, at.RunID, at.ExecID, at.Attempt)
			}
		}
		lr.mu.Unlock()
	}
	return call
}

// deadline is the end of a try of at that starts now; zero without a timeout.
func (e *Engine) deadline(at activityTask) time.Time {
	if at.TimeoutMS <= 0 {
		return time.Time{}
	}
	return e.clock.Now().Add(time.Duration(at.TimeoutMS) * time.Millisecond)
}

// tryTimers are a try's start-to-close timeout and its heartbeat timeout, re-armed by each
// heartbeat.
type tryTimers struct {
	clock   Clock
	hb      time.Duration
	owner   *tryState // expired by the timer that fires
	mu      sync.Mutex
	timeout func() bool // stops the start-to-close timer
	hbStop  func() bool
}

// start arms the timers of a try of at; s.expire is called with the one that fires.
func (t *tryTimers) start(c Clock, at activityTask, s *tryState) {
	t.clock, t.hb, t.owner = c, time.Duration(at.HeartbeatMS)*time.Millisecond, s
	if d := time.Duration(at.TimeoutMS) * time.Millisecond; d > 0 {
		t.timeout = c.AfterFunc(d, func() { s.expire("timeout") })
	}
	t.heartbeat()
}

func (t *tryTimers) heartbeat() {
	if t.hb <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hbStop != nil {
		t.hbStop()
	}
	t.hbStop = t.clock.AfterFunc(t.hb, func() { t.owner.expire("heartbeat_timeout") })
}

func (t *tryTimers) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timeout != nil {
		t.timeout()
	}
	if t.hbStop != nil {
		t.hbStop()
	}
}

func timedOutEvent(at activityTask, why, build string) *history.Event {
	return &history.Event{Type: history.ActivityTimedOut, Step: at.Step, ActivityExecutionID: at.ExecID, Attempt: at.Attempt,
		Data: history.MustData(history.AttemptFailure{PluginSHA256: build, Failure: history.Failure{Category: history.CategoryTimeout,
			PropagationKind: "timeout", Type: why, Message: fmt.Sprintf("attempt %d exceeded its %s", at.Attempt, why)}})}
}

// outcomeEvent turns a finished call into ActivityCompleted or ActivityAttemptFailed.
func outcomeEvent(at activityTask, res callResult) *history.Event {
	base := history.Event{Step: at.Step, ActivityExecutionID: at.ExecID, Attempt: at.Attempt}
	switch {
	case res.err != nil:
		f := failureOf(res.err)
		base.Type = history.ActivityAttemptFailed
		if f.Category == history.CategoryTimeout {
			// The worker enforced the try's deadline before the engine's timer fired: the same
			// fact, recorded the same way.
			base.Type = history.ActivityTimedOut
		}
		base.Data = history.MustData(history.AttemptFailure{Failure: f, PluginSHA256: res.build})
	case len(res.out) > interpreter.MaxPayloadBytes:
		base.Type = history.ActivityAttemptFailed
		base.Data = history.MustData(history.AttemptFailure{PluginSHA256: res.build, Failure: history.Failure{Category: history.CategoryStructuralLimit,
			Type: "PayloadTooLarge", NonRetryable: true,
			Message: fmt.Sprintf("activity output is %d bytes, over the %d-byte limit", len(res.out), interpreter.MaxPayloadBytes)}})
	default:
		base.Type = history.ActivityCompleted
		var err error
		if len(res.out) > 0 {
			base.Data, err = history.ActivityResult{Output: res.out, PluginSHA256: res.build}.JSON()
		}
		if len(res.out) == 0 || err != nil { // no output, or not JSON: recorded as null
			base.Data = history.MustData(history.ActivityResult{Output: json.RawMessage("null"), PluginSHA256: res.build})
		}
	}
	return &base
}

func failureOf(err error) history.Failure {
	var ae *history.ActivityError
	if errors.As(err, &ae) {
		cat := ae.Category
		if cat == "" {
			cat = history.CategoryActivity
		}
		return history.Failure{Category: cat, Type: ae.Type, Message: ae.Message, NonRetryable: ae.NonRetryable, Details: ae.Details,
			NextRetryDelayMS: ae.NextRetryDelayMS}
	}
	return history.Failure{Category: history.CategoryActivity, Message: err.Error()}
}

// cancelInflight cancels every try in flight, once the engine is stopped (no try is
// launched after): what cancelling the engine's context does for its other work.
func (e *Engine) cancelInflight() {
	e.mu.Lock()
	cancels := make([]context.CancelFunc, 0, len(e.inflight))
	for _, cancel := range e.inflight {
		cancels = append(cancels, cancel)
	}
	e.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
}

func (e *Engine) cancelCall(taskID string) {
	e.mu.Lock()
	cancel := e.inflight[taskID]
	delete(e.inflight, taskID)
	e.mu.Unlock()
	e.sched.remove(taskID)
	if cancel != nil {
		cancel()
	}
}

// pluginRef resolves a run's declaration of a plugin. lr.mu is held and lr resident.
func pluginRef(lr *liveRun, name string) history.PluginRef {
	p := lr.w.Plugins[name]
	if p == nil {
		return history.PluginRef{}
	}
	return history.PluginRef{Command: p.Command, Dir: lr.dir, SHA256: p.SHA256, Env: p.Env, StartTimeoutMS: p.StartTimeout.D.Milliseconds()}
}

// HeartbeatEvery is the most often a try's heartbeat progress is written to the history.
const HeartbeatEvery = time.Second
