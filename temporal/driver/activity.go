package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// taskKey is the Temporal ActivityID of one try: wend's task id, so a try is named the same
// in both engines' records.
func taskKey(execID string, attempt int) string { return interpreter.TaskID(execID, attempt) }

// startActivity runs one try of an activity as one Temporal activity with Temporal's retries
// off: wend keeps the backoff list, jitter, non_retryable types and attempt numbers, and a
// retry waits on a Temporal timer until availableAt.
func (d *driver) startActivity(step, execID string, attempt int, availableAt time.Time) {
	sched, ok := d.r.Activity(execID)
	if !ok {
		return
	}
	key := taskKey(execID, attempt)
	actx := d.withCancel(key)
	base := history.Event{Step: step, ActivityExecutionID: execID, Attempt: attempt}
	wait := availableAt.Sub(workflow.Now(d.ctx))
	workflow.Go(d.ctx, func(gctx workflow.Context) {
		if wait > 0 && workflow.NewTimer(actx, wait).Get(gctx, nil) != nil {
			return // cancelled during the backoff
		}
		// Built now, not at scheduling: LastProgress holds what the previous try reported.
		call := d.call(step, execID, attempt, sched)
		if f := d.admitCall(call); f != nil {
			delete(d.cancels, key)
			base.Type, base.Data = history.ActivityAttemptFailed, history.MustData(history.AttemptFailure{Failure: *f})
			d.send(gctx, base)
			return
		}
		d.acts++
		liveness := d.liveness(gctx)
		in := wire.Call{ActivityCall: call, HostHeartbeats: sched.HeartbeatTimeout <= 0}
		if liveness {
			in = wire.Call{ActivityCall: call, Liveness: true, HeartbeatTimeoutMS: sched.HeartbeatTimeout}
		}
		in.Workflow, in.RunTraceParent = d.w.Name, d.st.TraceParent
		opts := workflow.WithActivityOptions(actx, tryOptions(key, sched, liveness))
		var res wire.Result
		var err error
		if d.pluginBuilds(gctx) {
			err = workflow.ExecuteActivity(opts, wire.ActivityCallBuild, in).Get(gctx, &res)
		} else {
			err = workflow.ExecuteActivity(opts, wire.ActivityCall, in).Get(gctx, &res.Output)
		}
		d.acts--
		if actx.Err() != nil {
			return // wend cancelled the try; the interpreter expects nothing from it
		}
		delete(d.cancels, key)
		for _, ev := range tryOutcome(base, res, err, liveness) {
			d.send(gctx, ev)
		}
	})
}

// pluginBuildVersion is the change id under which tries call wire.ActivityCallBuild and
// record the plugin build on their outcome. A run whose history has no marker for it was
// started before, scheduled wire.ActivityCall, and replays doing so.
const pluginBuildVersion = "plugin-build"

func (d *driver) pluginBuilds(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, pluginBuildVersion, workflow.DefaultVersion, 1) == 1
}

// livenessVersion is the change id under which every try has wire.LivenessTimeout as its
// Temporal heartbeat timeout and the worker beats for it, so a heartbeat timeout is a dead
// worker: recorded as ActivityAttemptInterrupted and redelivered, not counted as a try. A run
// whose history has no marker for it was started before, and replays its tries' heartbeat
// timeouts as timeouts of the try.
const livenessVersion = "liveness-redelivery"

// livenessTimeout is wire.LivenessTimeout; driver tests shorten it, since the test
// environment's heartbeat timeouts run on the wall clock.
var livenessTimeout = wire.LivenessTimeout

func (d *driver) liveness(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, livenessVersion, workflow.DefaultVersion, 1) == 1
}

func (d *driver) call(step, execID string, attempt int, sched history.ActivitySchedule) history.ActivityCall {
	call := history.ActivityCall{Plugin: sched.Plugin, Activity: sched.Activity, Input: sched.Input,
		WorkflowID: d.st.WorkflowID, RunID: d.st.RunID, StepPath: step, ActivityExecutionID: execID,
		ActivityAttemptID: interpreter.AttemptID(execID, attempt), Attempt: attempt, LastProgress: d.r.LastProgress(execID)}
	if sched.TimeoutMS > 0 {
		call.Deadline = workflow.Now(d.ctx).Add(time.Duration(sched.TimeoutMS) * time.Millisecond).UTC()
	}
	if p := d.w.Plugins[sched.Plugin]; p != nil {
		call.Declared = history.PluginRef{Command: p.Command, Dir: filepath.Dir(d.st.SpecFile), SHA256: p.SHA256, Env: p.Env,
			StartTimeoutMS: p.StartTimeout.D.Milliseconds()}
	}
	call.Secrets = interpreter.SecretRefs(d.w, filepath.Dir(d.st.SpecFile))
	call.SecretPlaces = d.r.SecretPlaces(execID)
	return call
}

// admitCall refuses a try Temporal would refuse with an error of its own: a call over the
// payload limit, or one more activity than Temporal lets a workflow hold open. The try fails
// for good with a wend failure that says what to change.
func (d *driver) admitCall(call history.ActivityCall) *history.Failure {
	if n := encodedSize(call); n > MaxPayloadBytes {
		return payloadFailure("activity call", n)
	}
	if d.acts >= MaxPendingActivities {
		return pendingFailure(d.acts)
	}
	return nil
}

func payloadFailure(what string, n int) *history.Failure {
	return &history.Failure{Category: history.CategoryStructuralLimit, PropagationKind: "structural_limit",
		Type: "PayloadTooLarge", NonRetryable: true,
		Message: fmt.Sprintf("%s is %d bytes with its input, over the %d-byte limit of a Temporal payload; pass a reference to the data instead", what, n, MaxPayloadBytes)}
}

func pendingFailure(n int) *history.Failure {
	return &history.Failure{Category: history.CategoryStructuralLimit, PropagationKind: "structural_limit",
		Type: "StructuralLimit", NonRetryable: true,
		Message: fmt.Sprintf("the run already has %d activities open on Temporal, the limit", n)}
}

// tryOptions are one try's Temporal options. A heartbeat timeout is always set: under
// liveness it is wire.LivenessTimeout, and the worker beats every third of it and enforces
// the step's own heartbeat_timeout itself; before, it was the step's, or
// wire.DefaultHeartbeatTimeout with the worker beating for a step that set none.
func tryOptions(key string, sched history.ActivitySchedule, liveness bool) workflow.ActivityOptions {
	o := workflow.ActivityOptions{ActivityID: key, StartToCloseTimeout: DefaultStartToClose,
		HeartbeatTimeout: wire.DefaultHeartbeatTimeout, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}}
	if sched.TimeoutMS > 0 {
		o.StartToCloseTimeout = time.Duration(sched.TimeoutMS) * time.Millisecond
	}
	switch {
	case liveness:
		o.HeartbeatTimeout = livenessTimeout
	case sched.HeartbeatTimeout > 0:
		o.HeartbeatTimeout = time.Duration(sched.HeartbeatTimeout) * time.Millisecond
	}
	return o
}

// tryOutcome phrases a finished try as wend inputs: the progress it last reported (so the
// next try gets it as LastProgress), then its outcome.
// Under liveness, a Temporal heartbeat timeout is the worker's death: the try is recorded as
// interrupted, which the run answers with a redelivery, as locally after a crash.
func tryOutcome(base history.Event, res wire.Result, err error, liveness bool) []history.Event {
	if err == nil {
		out := res.Output
		ev := base
		switch {
		case len(out) > interpreter.MaxPayloadBytes:
			ev.Type, ev.Data = history.ActivityAttemptFailed, history.MustData(history.AttemptFailure{Failure: history.Failure{
				Category: history.CategoryStructuralLimit, Type: "PayloadTooLarge", NonRetryable: true,
				Message: fmt.Sprintf("activity output is %d bytes, over the %d-byte limit", len(out), interpreter.MaxPayloadBytes)}})
		default:
			if len(out) == 0 || !json.Valid(out) {
				out = json.RawMessage("null")
			}
			ev.Type, ev.Data = history.ActivityCompleted, history.MustData(history.ActivityResult{Output: out, PluginSHA256: res.PluginSHA256})
		}
		return []history.Event{ev}
	}
	f, progress, build := tryFailure(base.Attempt, err)
	var evs []history.Event
	if len(progress) > 0 && json.Valid(progress) {
		hb := base
		hb.Type, hb.Data = history.ActivityHeartbeatRecorded, history.MustData(history.HeartbeatRecord{Progress: progress})
		evs = append(evs, hb)
	}
	ev := base
	if liveness && (workerLost(err) || f.Type == wire.WorkerStopped) {
		why := fmt.Sprintf("stopped answering for %s", livenessTimeout)
		if f.Type == wire.WorkerStopped {
			why = "stopped before it finished (its --grace ran out)"
		}
		ev.Type, ev.Data = history.ActivityAttemptInterrupted, history.MustData(history.AttemptInterruption{Reason: fmt.Sprintf(
			"the worker running attempt %d %s; redelivered as attempt %d", base.Attempt, why, base.Attempt+1)})
		return append(evs, ev)
	}
	ev.Type = history.ActivityAttemptFailed
	if f.Category == history.CategoryTimeout {
		ev.Type = history.ActivityTimedOut
	}
	ev.Data = history.MustData(history.AttemptFailure{Failure: f, PluginSHA256: build})
	return append(evs, ev)
}

// workerLost says whether a try ended because Temporal heard no beat from its worker for
// wire.LivenessTimeout: the worker died or lost the server.
func workerLost(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT
}

// tryFailure reads a failed try: a timeout (start-to-close or heartbeat) with the last
// heartbeat's progress, or the plugin's failure as the worker sent it (wire.ActivityFailure).
func tryFailure(attempt int, err error) (f history.Failure, progress json.RawMessage, build string) {
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		why := "timeout"
		if te.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT {
			why = "heartbeat_timeout"
		}
		var p wire.Progress
		if te.HasLastHeartbeatDetails() {
			_ = te.LastHeartbeatDetails(&p) // undecodable progress is no progress
		}
		return history.Failure{Category: history.CategoryTimeout, PropagationKind: "timeout", Type: why,
			Message: fmt.Sprintf("attempt %d exceeded its %s", attempt, why)}, p.Progress, ""
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		var af wire.ActivityFailure
		if ae.HasDetails() && ae.Details(&af) == nil && (af.Error.Message != "" || af.Error.Type != "") {
			e := af.Error
			cat, kind := e.Category, ""
			switch cat {
			case "":
				cat = history.CategoryActivity
			case history.CategoryTimeout: // the step's heartbeat_timeout, enforced by the worker
				kind = "timeout"
			}
			return history.Failure{Category: cat, PropagationKind: kind, Type: e.Type, Message: e.Message, NonRetryable: e.NonRetryable, Details: e.Details,
				NextRetryDelayMS: e.NextRetryDelayMS}, af.Progress, af.PluginSHA256
		}
		return history.Failure{Category: history.CategoryActivity, Type: ae.Type(), Message: ae.Message(), NonRetryable: ae.NonRetryable()}, nil, ""
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return history.Failure{Category: history.CategoryActivity, Type: "Cancelled", Message: "the worker cancelled the attempt"}, nil, ""
	}
	return history.Failure{Category: history.CategoryActivity, Message: err.Error()}, nil, ""
}
