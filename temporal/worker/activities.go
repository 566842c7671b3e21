package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wendflow/wend/failpoint"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/internal/closing"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/tracing"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
)

// Plugins runs one try of a plugin activity: plugins.Router on a worker, a fake in tests.
type Plugins interface {
	Execute(ctx context.Context, call history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error)
}

// BuildPlugins is Plugins that also names the plugin build serving a try (plugins.Router):
// served is called with its sha256 once the plugin is started.
type BuildPlugins interface {
	Plugins
	ExecuteBuild(ctx context.Context, call history.ActivityCall, hb func(history.Heartbeat), served func(sha256 string)) (json.RawMessage, error)
}

// Activities are the activities a wend worker hosts.
type Activities struct {
	Plugins Plugins
	// Client reads other workflows' outcomes for wait_for_workflow.
	Client client.Client
	// Traces exports a span per try (nil: none).
	Traces *tracing.Provider
	// Log, when set, gets a line per try that did not complete in a run with a trace,
	// carrying the try's trace_id and span_id (traces.go).
	Log io.Writer
	// graceOver is closed when a stopping worker's grace has run out: tries still running
	// are cancelled and report WorkerStopped. Nil: never.
	graceOver <-chan struct{}
}

// Register registers the activities under their wire names on a worker.
func (a *Activities) Register(r sdkworker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: wire.ActivityCall})
	r.RegisterActivityWithOptions(a.CallBuild, activity.RegisterOptions{Name: wire.ActivityCallBuild})
	r.RegisterActivityWithOptions(a.Await, activity.RegisterOptions{Name: wire.ActivityAwait})
}

func (a *Activities) beat(ctx context.Context, p wire.Progress) { activity.RecordHeartbeat(ctx, p) }

// Call is wire.ActivityCall: exactly one try of a plugin activity (the driver keeps wend's
// retries, so Temporal's are off). Every heartbeat carries the plugin's latest progress
// (wire.Progress), so a try that times out hands it to the next one. Under wire.Call.Liveness
// the worker beats every third of the try's heartbeat timeout (wire.LivenessTimeout) whatever
// the plugin does, so Temporal's heartbeat timeout fires only when this worker is gone, and the
// step's own heartbeat_timeout is enforced here against the plugin's beats, as the local engine
// does. (Runs from before Liveness: the worker beats only for a step without heartbeat_timeout,
// wire.Call.HostHeartbeats.)
func (a *Activities) Call(ctx context.Context, in wire.Call) (json.RawMessage, error) {
	out, _, err := a.call(ctx, in)
	return out, err
}

// CallBuild is wire.ActivityCallBuild: Call, returning the plugin build with the output (and
// on a failure in wire.ActivityFailure), so the driver records which build served each try.
func (a *Activities) CallBuild(ctx context.Context, in wire.Call) (wire.Result, error) {
	out, build, err := a.call(ctx, in)
	if err != nil {
		return wire.Result{}, err
	}
	return wire.Result{Output: out, PluginSHA256: build}, nil
}

func (a *Activities) call(ctx context.Context, in wire.Call) (json.RawMessage, string, error) {
	call := in.ActivityCall
	if string(call.LastProgress) == "null" {
		call.LastProgress = nil // a first try's "none", as JSON carries it
	}
	traced := a.traceTry(ctx, in, &call)
	var mu sync.Mutex
	var progress json.RawMessage
	last := func() json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return progress
	}
	hb := func(h history.Heartbeat) {
		if len(h.Progress) > 0 {
			mu.Lock()
			progress = h.Progress
			mu.Unlock()
		}
		a.beat(ctx, wire.Progress{Progress: last()})
	}
	ctx, stopCut := a.cutAtGrace(ctx)
	defer stopCut()
	pctx, stepTimedOut := ctx, func() bool { return false }
	if in.Liveness && in.HeartbeatTimeoutMS > 0 {
		var stopWatch func()
		var beat func()
		pctx, beat, stepTimedOut, stopWatch = watchPluginBeats(ctx, time.Duration(in.HeartbeatTimeoutMS)*time.Millisecond)
		defer stopWatch()
		inner := hb
		hb = func(h history.Heartbeat) { beat(); inner(h) }
	}
	if every := workerBeat(in.HostHeartbeats || in.Liveness, activity.GetInfo(ctx).HeartbeatTimeout); every > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				case <-t.C:
					a.beat(ctx, wire.Progress{Progress: last()})
				}
			}
		}()
	}
	// Crash tests (`-tags faults`) kill the worker here: the activity task is started but the
	// plugin never ran, and ...
	failpoint.Hit("worker-before-call")
	var build string
	var out json.RawMessage
	var err error
	if bp, ok := a.Plugins.(BuildPlugins); ok {
		out, err = bp.ExecuteBuild(pctx, call, hb, func(sha string) {
			mu.Lock()
			build = sha
			mu.Unlock()
		})
	} else {
		out, err = a.Plugins.Execute(pctx, call, hb)
	}
	if err != nil && ctx.Err() != nil && a.graceIsOver() {
		// This worker's grace ran out and the SDK cancelled the try: say so, so the driver
		// redelivers it at once instead of waiting out the liveness timeout.
		err = &history.ActivityError{Category: history.CategoryInternal, Type: wire.WorkerStopped,
			Message: fmt.Sprintf("the worker stopped before attempt %d finished", call.Attempt)}
	}
	if stepTimedOut() {
		out, err = nil, &history.ActivityError{Category: history.CategoryTimeout, Type: "heartbeat_timeout",
			Message: fmt.Sprintf("attempt %d exceeded its heartbeat_timeout", call.Attempt)}
	}
	// ... here: the plugin ran, but Temporal never hears of it, so the next try runs it again
	// under the same activity_execution_id.
	failpoint.Hit("worker-after-call")
	mu.Lock()
	defer mu.Unlock()
	traced(err, build)
	if err != nil {
		return nil, build, tryError(err, progress, build)
	}
	return out, build, nil
}

// workerBeat is how often the worker beats for the plugin: a third of the try's heartbeat
// timeout when the driver asks it to, else never.
func workerBeat(host bool, timeout time.Duration) time.Duration {
	if !host || timeout <= 0 {
		return 0
	}
	return timeout / 3
}

// cutAtGrace is ctx, also cancelled when the stopping worker's grace runs out.
func (a *Activities) cutAtGrace(ctx context.Context) (context.Context, func()) {
	if a.graceOver == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-a.graceOver:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (a *Activities) graceIsOver() bool {
	select {
	case <-a.graceOver:
		return true
	default:
		return false
	}
}

// watchPluginBeats enforces a step's heartbeat_timeout on the worker: the returned context is
// cancelled when d passes without a beat (the first counted from the start), beat re-arms it,
// and timedOut says whether that is how the context ended.
func watchPluginBeats(ctx context.Context, d time.Duration) (pctx context.Context, beat func(), timedOut func() bool, stop func()) {
	pctx, cancel := context.WithCancelCause(ctx)
	errMissed := errors.New("heartbeat_timeout")
	t := time.AfterFunc(d, func() { cancel(errMissed) })
	return pctx, func() { t.Reset(d) }, func() bool { return errors.Is(context.Cause(pctx), errMissed) }, func() { t.Stop(); cancel(nil) }
}

// tryError turns a failed try into the ApplicationError the driver reads: its type and
// message are the plugin's, its one detail wire.ActivityFailure (the error as wend records
// it and the last progress), and the non-retryable flag is kept.
func tryError(err error, progress json.RawMessage, build string) error {
	var ae *history.ActivityError
	if !errors.As(err, &ae) {
		ae = &history.ActivityError{Category: history.CategoryInternal, Type: "WorkerError", Message: err.Error()}
	}
	return temporal.NewApplicationErrorWithOptions(ae.Message, ae.Type, temporal.ApplicationErrorOptions{
		NonRetryable: ae.NonRetryable, Cause: err,
		Details: []any{wire.ActivityFailure{Error: *ae, Progress: progress, PluginSHA256: build}}})
}

// Await is wire.ActivityAwait: it blocks until the awaited workflow id's run has closed for
// good (following continue-as-new), heartbeating so a dead worker is noticed, and returns
// that run's wend status and terminal payload. Waiting has no effect, so Temporal may retry it.
func (a *Activities) Await(ctx context.Context, in wire.AwaitInput) (wire.AwaitResult, error) {
	if in.WorkflowID == "" {
		return wire.AwaitResult{}, temporal.NewNonRetryableApplicationError("wait_for_workflow: no workflow id", "BadAwait", nil)
	}
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		every = wire.DefaultHeartbeatTimeout / 3
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				a.beat(ctx, wire.Progress{})
			}
		}
	}()
	var out json.RawMessage
	err := a.Client.GetWorkflow(ctx, in.WorkflowID, "").Get(ctx, &out)
	status, _, c, ok := closing.Of(out, err)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return wire.AwaitResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("no workflow %s on this namespace", in.WorkflowID), "WorkflowNotFound", err)
	}
	if !ok {
		return wire.AwaitResult{}, fmt.Errorf("wait for workflow %s: %w", in.WorkflowID, err)
	}
	d, derr := a.Client.DescribeWorkflowExecution(ctx, in.WorkflowID, "")
	if derr != nil {
		return wire.AwaitResult{}, fmt.Errorf("wait for workflow %s: %w", in.WorkflowID, derr)
	}
	return wire.AwaitResult{RunID: d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), Status: status, Closed: c}, nil
}
