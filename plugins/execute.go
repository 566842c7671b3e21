package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wendflow/wend/history"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/sdk/go/wire"
)

// crashWait bounds how long a broken stream waits for the plugin's exit status, so a crash is
// reported within a second and with its cause.
var crashWait = time.Second // a var so tests can shorten it

type event struct {
	ev  *pluginv1.ExecuteEvent
	err error
}

// execute runs one try on p, on a lane or an Execute stream. The stream's context is not the
// caller's: on a deadline or a cancellation the host first sends Cancel and watches whether the plugin ends the try within
// the grace, and only then tears the stream down (killing the plugin if it did not stop). The
// calling goroutine does all the receiving; timers and ctx only trigger the stop, which keeps
// the common path free of extra goroutines.
func (p *process) execute(ctx context.Context, call history.ActivityCall, heartbeat func(history.Heartbeat)) (json.RawMessage, error) {
	started := time.Now()
	ts, err := p.open(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: request(call)}})
	if err != nil {
		return nil, p.lost(call, err)
	}
	st := &stopper{p: p, stream: ts.stream, started: started, cancelStream: ts.cancel}
	if !call.Deadline.IsZero() {
		t := time.AfterFunc(time.Until(call.Deadline), func() { st.stop(wire.ReasonDeadline, nil) })
		defer t.Stop()
	}
	defer context.AfterFunc(ctx, func() {
		reason := wire.ReasonCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = wire.ReasonDeadline
		}
		st.stop(reason, context.Cause(ctx))
	})()
	for {
		ev, err := ts.stream.Recv()
		if st.stopping() {
			if err == nil && ev.GetHeartbeat() != nil {
				continue
			}
			st.disarm()
			ts.cancel()
			return nil, st.err(call)
		}
		if out, err, final := p.handle(call, event{ev, err}, heartbeat); final {
			// A lane is reused only if its try ended with the plugin's own answer and no stop
			// began: a stop may still send Cancel on the stream, which must not reach the next
			// try. disarm settles that race.
			if st.disarm() && p.lanes.on && (ev.GetResult() != nil || ev.GetError() != nil) {
				p.lanes.put(ts)
			} else {
				ts.cancel()
			}
			return out, err
		}
	}
}

// stopper ends a try whose deadline passed or whose caller gave up: it sends Cancel and, if the
// try has not ended within the grace, kills the plugin's process group. Whatever the plugin
// answers afterwards, the try has failed: a late result is not accepted.
type stopper struct {
	p            *process
	stream       laneStream
	started      time.Time
	cancelStream context.CancelFunc

	mu      sync.Mutex
	reason  string // "" until stop
	cause   error
	elapsed time.Duration
	killed  bool
	killing chan struct{} // closed once kill has returned; nil unless killing
	grace   *time.Timer
	over    bool // the try has returned
}

func (s *stopper) stop(reason string, cause error) {
	s.mu.Lock()
	if s.reason != "" || s.over {
		s.mu.Unlock()
		return
	}
	s.reason, s.cause, s.elapsed = reason, cause, time.Since(s.started).Round(time.Millisecond)
	s.grace = time.AfterFunc(s.p.grace, s.kill)
	s.mu.Unlock()
	// Send may run alongside the caller's Recv; no other Send is in flight.
	_ = s.stream.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Cancel{Cancel: &pluginv1.Cancel{Reason: reason}}})
}

func (s *stopper) kill() {
	s.mu.Lock()
	if s.over {
		s.mu.Unlock()
		return
	}
	s.killed = true
	s.killing = make(chan struct{})
	s.mu.Unlock()
	s.p.kill()
	s.cancelStream() // unblocks Recv should the process linger
	close(s.killing)
}

func (s *stopper) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason != ""
}

// disarm marks the try over and reports whether it ended unstopped; after it, stop does nothing.
func (s *stopper) disarm() (clean bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.over = true
	if s.grace != nil {
		s.grace.Stop()
	}
	return s.reason == ""
}

// err is the try's error once stopped. If the plugin was being killed it first waits for the
// kill to finish, so the caller's next call finds the process dead and starts a new one.
func (s *stopper) err(call history.ActivityCall) error {
	s.mu.Lock()
	killing := s.killing
	s.mu.Unlock()
	if killing != nil {
		<-killing
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.p
	note := ""
	if s.killed {
		note = fmt.Sprintf("; the plugin did not stop within %s, so its process group was killed", p.grace)
	}
	if s.reason == wire.ReasonDeadline {
		return newError(history.CategoryTimeout, TypeTimeout, false, "plugin %s: activity %s: timed out after %s%s", p.name, call.Activity, s.elapsed, note)
	}
	why := ""
	if s.cause != nil {
		why = ": " + s.cause.Error()
	}
	return newError(history.CategoryCancelled, TypeCancelled, false, "plugin %s: activity %s: cancelled after %s%s%s", p.name, call.Activity, s.elapsed, why, note)
}

func request(call history.ActivityCall) *pluginv1.ExecuteRequest {
	req := &pluginv1.ExecuteRequest{
		Activity: call.Activity, Input: call.Input,
		WorkflowId: call.WorkflowID, RunId: call.RunID, StepPath: call.StepPath,
		ActivityExecutionId: call.ActivityExecutionID, ActivityAttemptId: call.ActivityAttemptID,
		Attempt: int32(call.Attempt), LastProgress: call.LastProgress, Traceparent: call.TraceParent,
	}
	if !call.Deadline.IsZero() {
		req.DeadlineUnixNanos = call.Deadline.UnixNano()
	}
	return req
}

// handle processes one stream event; final reports whether the try is over.
func (p *process) handle(call history.ActivityCall, e event, heartbeat func(history.Heartbeat)) (out json.RawMessage, err error, final bool) {
	if e.err != nil {
		if errors.Is(e.err, io.EOF) {
			return nil, callError(TypeProtocol, false, "plugin %s: activity %s: the plugin ended the try without a result or error", p.name, call.Activity), true
		}
		return nil, p.lost(call, e.err), true
	}
	switch ev := e.ev.Event.(type) {
	case *pluginv1.ExecuteEvent_Heartbeat:
		if heartbeat != nil {
			progress := ev.Heartbeat.GetProgress()
			if len(progress) > MaxPayloadBytes || (len(progress) > 0 && !json.Valid(progress)) {
				progress = nil // a liveness signal is still worth passing on
			}
			heartbeat(history.Heartbeat{Progress: json.RawMessage(progress)})
		}
		return nil, nil, false
	case *pluginv1.ExecuteEvent_Result:
		out, err := checkOutput(p.name, call.Activity, ev.Result.GetOutput())
		return out, err, true
	case *pluginv1.ExecuteEvent_Error:
		e := ev.Error
		if e.GetType() == TypeTimeout && !call.Deadline.IsZero() && !time.Now().Before(call.Deadline) {
			// The plugin's own copy of the deadline fired first; report it as ours.
			return nil, newError(history.CategoryTimeout, TypeTimeout, false, "plugin %s: activity %s: timed out at its deadline", p.name, call.Activity), true
		}
		ae := &history.ActivityError{
			Type: e.GetType(), Message: e.GetMessage(), NonRetryable: e.GetNonRetryable(),
			Category: history.CategoryActivity, NextRetryDelayMS: max(e.GetNextRetryDelayMs(), 0),
		}
		if d := e.GetDetails(); len(d) > 0 && json.Valid(d) {
			ae.Details = json.RawMessage(d)
		}
		return nil, ae, true
	default:
		return nil, callError(TypeProtocol, false, "plugin %s: activity %s: unknown event %T", p.name, call.Activity, ev), true
	}
}

func checkOutput(plugin, activity string, out []byte) (json.RawMessage, error) {
	if len(out) > MaxPayloadBytes {
		return nil, callError(TypePayloadTooLarge, true, "plugin %s: activity %s: output is %d bytes, over the %d-byte limit", plugin, activity, len(out), MaxPayloadBytes)
	}
	if len(out) == 0 {
		return json.RawMessage("null"), nil
	}
	if !json.Valid(out) {
		return nil, callError(TypeProtocol, true, "plugin %s: activity %s: output is not valid JSON", plugin, activity)
	}
	return json.RawMessage(out), nil
}

// lost explains a broken stream: the plugin died (retryable; a new process serves the retry),
// the connection broke (the process is killed so the next call starts afresh), or the plugin
// answered with a gRPC error.
func (p *process) lost(call history.ActivityCall, err error) error {
	code := status.Code(err)
	if code == codes.Unavailable || code == codes.Canceled || code == codes.Internal {
		select {
		case <-p.runner.done:
		case <-time.After(crashWait):
		}
	}
	if p.runner.exited() {
		p.runner.waitStderr(100 * time.Millisecond)
		return callError(TypeCrashed, false, "plugin %s: activity %s: the plugin exited during the call (%s)%s", p.name, call.Activity, p.runner.exitStatus(), p.stderr.last())
	}
	msg := status.Convert(err).Message()
	switch code {
	case codes.Unavailable, codes.Canceled:
		p.kill()
		return callError(TypeCrashed, false, "plugin %s: activity %s: lost the connection to the plugin (%s), killed it", p.name, call.Activity, msg)
	case codes.ResourceExhausted:
		return callError(TypePayloadTooLarge, true, "plugin %s: activity %s: %s", p.name, call.Activity, msg)
	case codes.Unimplemented:
		return callError(TypeProtocol, true, "plugin %s: activity %s: the plugin does not implement wend.plugin.v1: %s", p.name, call.Activity, msg)
	default:
		return callError(TypeProtocol, false, "plugin %s: activity %s: %s: %s", p.name, call.Activity, code, msg)
	}
}
