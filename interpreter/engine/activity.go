package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	t := activityTaskOf(lr.rec, ev, a, rs)
	if t.AvailableAt.After(e.clock.Now()) {
		e.sched.add(t)
		return
	}
	e.call(t)
}

// call runs one activity try in its own goroutine and delivers the outcome to the run.
func (e *Engine) call(t history.Task) {
	at, err := history.DataOf[activityTask](history.Event{Data: t.Data})
	if err != nil {
		e.logf("wend: task %s: %v", t.ID, err)
		return
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.mu.Lock()
	if e.stopped != nil {
		e.mu.Unlock()
		cancel()
		return
	}
	e.inflight[t.ID] = cancel
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		defer e.cancelCall(t.ID)
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
// nil when the call was cancelled by the engine.
func (e *Engine) execute(ctx context.Context, cancel context.CancelFunc, at activityTask) *history.Event {
	var timedOut atomic.Value // "timeout" or "heartbeat_timeout"
	var stops []func() bool
	var mu sync.Mutex
	arm := func(d time.Duration, why string) {
		if d <= 0 {
			return
		}
		stop := e.clock.AfterFunc(d, func() { timedOut.CompareAndSwap(nil, why); cancel() })
		mu.Lock()
		stops = append(stops, stop)
		mu.Unlock()
	}
	arm(time.Duration(at.TimeoutMS)*time.Millisecond, "timeout")
	var hbStop atomic.Value
	armHB := func() {
		if at.HeartbeatMS <= 0 {
			return
		}
		if s, ok := hbStop.Load().(func() bool); ok {
			s()
		}
		hbStop.Store(e.clock.AfterFunc(time.Duration(at.HeartbeatMS)*time.Millisecond, func() {
			timedOut.CompareAndSwap(nil, "heartbeat_timeout")
			cancel()
		}))
	}
	armHB()
	call := history.ActivityCall{Plugin: at.Plugin, Activity: at.Activity, Input: at.Input, WorkflowID: at.WorkflowID,
		RunID: at.RunID, StepPath: at.Step, ActivityExecutionID: at.ExecID,
		ActivityAttemptID: interpreter.AttemptID(at.ExecID, at.Attempt), Attempt: at.Attempt}
	if lr := e.live(at.RunID); lr != nil {
		call.Declared = pluginRef(lr, at.Plugin)
	}
	if at.TimeoutMS > 0 {
		call.Deadline = e.clock.Now().Add(time.Duration(at.TimeoutMS) * time.Millisecond)
	}
	if lr := e.live(at.RunID); lr != nil {
		lr.mu.Lock()
		call.LastProgress = lr.interp.LastProgress(at.ExecID)
		lr.mu.Unlock()
	}
	rec := e.heartbeatRecorder(at)
	out, err := e.opts.Activities.Execute(ctx, call, func(hb history.Heartbeat) { armHB(); rec(hb) })
	mu.Lock()
	for _, s := range stops {
		s()
	}
	mu.Unlock()
	if s, ok := hbStop.Load().(func() bool); ok {
		s()
	}
	base := history.Event{Step: at.Step, ActivityExecutionID: at.ExecID, Attempt: at.Attempt}
	if why, ok := timedOut.Load().(string); ok {
		base.Type = history.ActivityTimedOut
		base.Data = history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryTimeout,
			PropagationKind: "timeout", Type: why, Message: fmt.Sprintf("attempt %d exceeded its %s", at.Attempt, why)}})
		return &base
	}
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		base.Type = history.ActivityAttemptFailed
		base.Data = history.MustData(history.AttemptFailure{Failure: failureOf(err)})
		return &base
	}
	if len(out) > interpreter.MaxPayloadBytes {
		base.Type = history.ActivityAttemptFailed
		base.Data = history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryStructuralLimit,
			Type: "PayloadTooLarge", NonRetryable: true,
			Message: fmt.Sprintf("activity output is %d bytes, over the %d-byte limit", len(out), interpreter.MaxPayloadBytes)}})
		return &base
	}
	if len(out) == 0 || !json.Valid(out) {
		out = json.RawMessage("null")
	}
	base.Type = history.ActivityCompleted
	base.Data = history.MustData(history.ActivityResult{Output: out})
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
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			_ = e.deliver(lr, ev)
		}()
	}
}
