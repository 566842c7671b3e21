package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/faults"
	"github.com/wendflow/wend/interpreter"
)

func taskIDOf(ev history.Event) string { return interpreter.TaskID(ev.ActivityExecutionID, ev.Attempt) }

// scheduleActivityFrom turns a committed ActivityScheduled / ActivityRetryScheduled into a call,
// now or when its backoff ends.
func (e *Engine) scheduleActivityFrom(lr *liveRun, ev history.Event) {
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
	if avail.After(e.clock.Now()) {
		e.sched.add(activityTaskOf(lr.rec, ev, a, rs))
		return
	}
	e.launch(interpreter.TaskID(at.ExecID, at.Attempt), at)
}

// call runs one activity task in its own goroutine and delivers the outcome to the run.
func (e *Engine) call(t history.Task) {
	at, err := history.DataOf[activityTask](history.Event{Data: t.Data})
	if err != nil {
		e.logf("wend: task %s: %v", t.ID, err)
		return
	}
	e.launch(t.ID, at)
}

// launch is call with the task's payload already decoded (the common path: the payload was
// built in this process moments ago).
func (e *Engine) launch(taskID string, at activityTask) {
	ctx, cancel := context.WithCancel(e.ctx)
	e.mu.Lock()
	if e.stopped != nil {
		e.mu.Unlock()
		cancel()
		return
	}
	e.inflight[taskID] = cancel
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		defer e.cancelCall(taskID)
		select {
		case e.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-e.sem }()
		ev := e.execute(ctx, cancel, at)
		faults.Hit("after-call")
		if ev == nil || e.isStopped() != nil {
			return // cancelled, or shutting down: the task stays and runs again after a restart
		}
		if lr := e.live(at.RunID); lr != nil {
			_ = e.deliver(lr, *ev)
		}
	}()
}

// execute makes the call with the step's timeouts and turns its outcome into an input event;
// nil when the call was cancelled by the engine. At a timeout the try is over for the engine
// at once, whether or not the plugin stops: a hung call must not hold the run. If it reports
// later anyway, that report is a superseded attempt's and is dropped (and counted).
func (e *Engine) execute(ctx context.Context, cancel context.CancelFunc, at activityTask) *history.Event {
	expired := make(chan string, 1) // "timeout" or "heartbeat_timeout"
	expire := func(why string) {
		select {
		case expired <- why:
		default:
		}
		cancel()
	}
	t := newTryTimers(e.clock, at, expire)
	defer t.stop()
	call := e.callOf(at)
	rec := e.heartbeatRecorder(at)
	resc := make(chan callResult, 1)
	go func() {
		out, err := e.opts.Activities.Execute(ctx, call, func(hb history.Heartbeat) { t.heartbeat(); rec(hb) })
		resc <- callResult{out, err}
	}()
	select {
	case res := <-resc:
		select {
		case why := <-expired:
			return timedOutEvent(at, why)
		default:
		}
		if ctx.Err() != nil {
			return nil
		}
		return outcomeEvent(at, res)
	case why := <-expired:
		go e.lateReport(ctx, at, resc)
		return timedOutEvent(at, why)
	}
}

type callResult struct {
	out json.RawMessage
	err error
}

// lateReport waits for a timed-out call to end and hands a real result (not the plugin
// giving up on cancellation) to the run, which drops it as superseded and counts it.
func (e *Engine) lateReport(ctx context.Context, at activityTask, resc <-chan callResult) {
	res := <-resc
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

// callOf builds the plugin call of a task.
func (e *Engine) callOf(at activityTask) history.ActivityCall {
	call := history.ActivityCall{Plugin: at.Plugin, Activity: at.Activity, Input: at.Input, WorkflowID: at.WorkflowID,
		RunID: at.RunID, StepPath: at.Step, ActivityExecutionID: at.ExecID,
		ActivityAttemptID: interpreter.AttemptID(at.ExecID, at.Attempt), Attempt: at.Attempt}
	if at.TimeoutMS > 0 {
		call.Deadline = e.clock.Now().Add(time.Duration(at.TimeoutMS) * time.Millisecond)
	}
	if lr := e.live(at.RunID); lr != nil {
		call.Declared = pluginRef(lr, at.Plugin)
		lr.mu.Lock()
		call.LastProgress = lr.interp.LastProgress(at.ExecID)
		lr.mu.Unlock()
	}
	return call
}

// tryTimers are a try's start-to-close timeout and its heartbeat timeout, re-armed by each
// heartbeat.
type tryTimers struct {
	clock  Clock
	hb     time.Duration
	expire func(string)
	mu     sync.Mutex
	stops  []func() bool
	hbStop func() bool
}

func newTryTimers(c Clock, at activityTask, expire func(string)) *tryTimers {
	t := &tryTimers{clock: c, hb: time.Duration(at.HeartbeatMS) * time.Millisecond, expire: expire}
	if d := time.Duration(at.TimeoutMS) * time.Millisecond; d > 0 {
		t.stops = append(t.stops, c.AfterFunc(d, func() { expire("timeout") }))
	}
	t.heartbeat()
	return t
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
	t.hbStop = t.clock.AfterFunc(t.hb, func() { t.expire("heartbeat_timeout") })
}

func (t *tryTimers) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.stops {
		s()
	}
	if t.hbStop != nil {
		t.hbStop()
	}
}

func timedOutEvent(at activityTask, why string) *history.Event {
	return &history.Event{Type: history.ActivityTimedOut, Step: at.Step, ActivityExecutionID: at.ExecID, Attempt: at.Attempt,
		Data: history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryTimeout,
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
		base.Data = history.MustData(history.AttemptFailure{Failure: f})
	case len(res.out) > interpreter.MaxPayloadBytes:
		base.Type = history.ActivityAttemptFailed
		base.Data = history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryStructuralLimit,
			Type: "PayloadTooLarge", NonRetryable: true,
			Message: fmt.Sprintf("activity output is %d bytes, over the %d-byte limit", len(res.out), interpreter.MaxPayloadBytes)}})
	default:
		out := res.out
		if len(out) == 0 || !json.Valid(out) {
			out = json.RawMessage("null")
		}
		base.Type = history.ActivityCompleted
		base.Data = history.MustData(history.ActivityResult{Output: out})
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
		return history.Failure{Category: cat, Type: ae.Type, Message: ae.Message, NonRetryable: ae.NonRetryable, Details: ae.Details}
	}
	return history.Failure{Category: history.CategoryActivity, Message: err.Error()}
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

// pluginRef resolves a run's declaration of a plugin.
func pluginRef(lr *liveRun, name string) history.PluginRef {
	p := lr.w.Plugins[name]
	if p == nil {
		return history.PluginRef{}
	}
	return history.PluginRef{Command: p.Command, Dir: lr.dir, SHA256: p.SHA256, Env: p.Env}
}

// HeartbeatEvery is the most often a try's heartbeat progress is written to the history.
const HeartbeatEvery = time.Second

// heartbeatRecorder returns a heartbeat handler that records progress in the history at most
// once per HeartbeatEvery, in the background, so a chatty plugin never waits on a commit.
func (e *Engine) heartbeatRecorder(at activityTask) func(history.Heartbeat) {
	var mu sync.Mutex
	var last time.Time
	return func(hb history.Heartbeat) {
		if len(hb.Progress) == 0 || !json.Valid(hb.Progress) {
			return
		}
		now := e.clock.Now()
		mu.Lock()
		if !last.IsZero() && now.Sub(last) < HeartbeatEvery {
			mu.Unlock()
			return
		}
		last = now
		mu.Unlock()
		lr := e.live(at.RunID)
		if lr == nil {
			return
		}
		ev := history.Event{Type: history.ActivityHeartbeatRecorded, Step: at.Step, ActivityExecutionID: at.ExecID,
			Attempt: at.Attempt, Data: history.MustData(history.HeartbeatRecord{Progress: hb.Progress})}
		e.spawn(func() {
			_ = e.deliver(lr, ev)
		})
	}
}
