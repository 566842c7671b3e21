package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// NewServer returns the wend.plugin.v1.Activities service for acts. Serve uses it; tests and
// benchmarks can register it on their own gRPC server.
func NewServer(acts Activities) pluginv1.ActivitiesServer {
	return &server{acts: acts}
}

type server struct {
	pluginv1.UnimplementedActivitiesServer
	acts Activities
	fast fastLane
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	names := make([]string, 0, len(s.acts))
	for name := range s.acts {
		names = append(names, name)
	}
	sort.Strings(names)
	resp := &pluginv1.DescribeResponse{}
	for _, name := range names {
		a := s.acts[name]
		resp.Activities = append(resp.Activities, &pluginv1.ActivityInfo{
			Name: name, Description: a.Description,
			InputSchema: a.InputSchema, OutputSchema: a.OutputSchema,
		})
	}
	return resp, nil
}

// errHostCancelled is the cause of a handler's context when the host sent Cancel.
var errHostCancelled = errors.New("cancelled by the host")

func (s *server) Execute(stream pluginv1.Activities_ExecuteServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	req := first.GetRequest()
	if req == nil {
		return status.Error(codes.InvalidArgument, "execute: first message must be a request")
	}
	tc := &tryContext{parent: stream.Context()}
	defer tc.end()
	go func() { // the host's Cancel, or the stream's end, cancels the handler
		for {
			in, err := stream.Recv()
			if err != nil {
				return
			}
			if in.GetCancel() != nil {
				tc.cancelWith(errHostCancelled)
			}
		}
	}()
	return s.serve(tc, &try{stream: stream}, req)
}

// serve runs one try of req and sends its final event (result or error) on t.
func (s *server) serve(tc *tryContext, t *try, req *pluginv1.ExecuteRequest) error {
	act, ok := s.acts[req.Activity]
	if !ok {
		return t.fail(NonRetryable(TypeUnknownActivity, fmt.Sprintf("unknown activity %q (have %s)", req.Activity, s.names())))
	}
	if len(req.Input) > MaxPayloadBytes {
		return t.fail(NonRetryable(TypePayloadTooLarge, fmt.Sprintf("input of %s is %d bytes, over the %d-byte limit", req.Activity, len(req.Input), MaxPayloadBytes)))
	}
	info := infoOf(req)
	tc.deadline = info.Deadline // before the handler can make the context
	out, err := run(&Context{Context: tc, Info: info, heartbeat: t.heartbeat}, act, req.Input)
	if err != nil {
		return t.fail(asError(tc, err))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return t.fail(NonRetryable(TypeError, fmt.Sprintf("encode output of %s: %v", req.Activity, err)))
	}
	if len(b) > MaxPayloadBytes {
		return t.fail(NonRetryable(TypePayloadTooLarge, fmt.Sprintf("output of %s is %d bytes, over the %d-byte limit", req.Activity, len(b), MaxPayloadBytes)))
	}
	return t.final(&pluginv1.ExecuteEvent{Event: &pluginv1.ExecuteEvent_Result{Result: &pluginv1.Result{Output: b}}})
}

func (s *server) names() string {
	names := make([]string, 0, len(s.acts))
	for n := range s.acts {
		names = append(names, n)
	}
	sort.Strings(names)
	b, _ := json.Marshal(names)
	return string(b)
}

func infoOf(req *pluginv1.ExecuteRequest) Info {
	info := Info{
		Activity: req.Activity, WorkflowID: req.WorkflowId, RunID: req.RunId, StepPath: req.StepPath,
		ActivityExecutionID: req.ActivityExecutionId, ActivityAttemptID: req.ActivityAttemptId,
		Attempt: int(req.Attempt), LastProgress: req.LastProgress, TraceParent: req.Traceparent,
	}
	if req.DeadlineUnixNanos != 0 {
		info.Deadline = time.Unix(0, req.DeadlineUnixNanos)
	}
	return info
}

// run calls the handler, turning a panic into a failed try instead of a dead plugin.
func run(ctx *Context, act Activity, input json.RawMessage) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = NewError(TypePanic, fmt.Sprintf("%s panicked: %v\n%s", ctx.Activity, p, debug.Stack()))
		}
	}()
	if act.Run == nil {
		return nil, NonRetryable(TypeError, ctx.Activity+" has no Run function")
	}
	return act.Run(ctx, input)
}

// asError maps a handler's error to the wire error. Context errors after a cancellation become
// Cancelled/Timeout so the host can tell a stop it asked for from a failure.
func asError(tc *tryContext, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if ctxErr := tc.err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return NewError(TypeTimeout, err.Error())
		}
		return NewError(TypeCancelled, context.Cause(tc).Error())
	}
	return NewError(TypeError, err.Error())
}

// try serialises sends on one Execute stream: gRPC forbids concurrent Send, and a handler may
// heartbeat from its own goroutines, even after it returned.
type try struct {
	mu     sync.Mutex
	stream interface {
		Send(*pluginv1.ExecuteEvent) error
	}
	ended bool
}

var errTryEnded = errors.New("heartbeat: the try has ended")

// send sends one of the try's events; last ends the try, so a heartbeat from a goroutine the
// handler left running cannot reach the host after the result (on a lane: inside the next try).
func (t *try) send(ev *pluginv1.ExecuteEvent, last bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return errTryEnded
	}
	t.ended = last
	return t.stream.Send(ev)
}

// final sends the try's last event.
func (t *try) final(ev *pluginv1.ExecuteEvent) error { return t.send(ev, true) }

func (t *try) heartbeat(progress json.RawMessage) error {
	return t.send(&pluginv1.ExecuteEvent{Event: &pluginv1.ExecuteEvent_Heartbeat{Heartbeat: &pluginv1.Heartbeat{Progress: progress}}}, false)
}

func (t *try) fail(e *Error) error {
	return t.final(&pluginv1.ExecuteEvent{Event: &pluginv1.ExecuteEvent_Error{Error: &pluginv1.Error{
		Type: e.Type, Message: e.Message, NonRetryable: e.NonRetryable, Details: e.details(),
		NextRetryDelayMs: e.NextRetryDelay.Milliseconds(),
	}}})
}
