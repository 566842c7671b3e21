package worker

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/testkit/otlptest"
	"github.com/wendflow/wend/tracing"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.temporal.io/sdk/testsuite"
)

const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestCallExportsTrySpans: a tracing worker exports one span per try it runs, to an OTLP
// receiver, in the run's trace (the accepted traceparent's, else derived from the run id),
// with the try's span id the plugin got in its traceparent, its attributes and outcome; the
// plugin's traceparent is the one the local engine would pass (tracing.TryParent).
func TestCallExportsTrySpans(t *testing.T) {
	for _, tc := range []struct {
		name, runTrace string
		err            error
		outcome, typ   string
	}{
		{"completed in the accepted trace", accepted, nil, "completed", ""},
		{"failed in a derived trace", "", &history.ActivityError{Type: "Refused", Message: "card declined"}, "failed", "Refused"},
		{"step heartbeat_timeout", accepted, &history.ActivityError{Category: history.CategoryTimeout, Type: "heartbeat_timeout", Message: "late"}, "timed_out", "heartbeat_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := startReceiver(t)
			p, err := tracing.FromEnv(context.Background(), os.Getenv, io.Discard)
			if err != nil || p == nil {
				t.Fatalf("FromEnv = %v, %v", p, err)
			}
			plugin := &fakePlugins{out: json.RawMessage(`1`), err: tc.err}
			env := tracedEnv(p, plugin)
			call := history.ActivityCall{Plugin: "pay", Activity: "charge", WorkflowID: "order-1", RunID: "r1",
				StepPath: "steps[1]", ActivityExecutionID: "e1", Attempt: 2}
			_, _ = env.ExecuteActivity(wire.ActivityCall, wire.Call{ActivityCall: call, Workflow: "order", RunTraceParent: tc.runTrace})
			shutdown(t, p)

			want := tracing.TryParent("r1", tc.runTrace, "e1", 2)
			if plugin.got.TraceParent != want {
				t.Errorf("plugin got traceparent %q, want %q", plugin.got.TraceParent, want)
			}
			spans := rcv.Spans()
			if len(spans) != 1 {
				t.Fatalf("exported %d spans, want 1", len(spans))
			}
			s := spans[0]
			if got := "00-" + hex.EncodeToString(s.TraceId) + "-" + hex.EncodeToString(s.SpanId) + "-01"; got != want {
				t.Errorf("span ids %s, want the plugin's traceparent %s", got, want)
			}
			if tc.runTrace != "" && !strings.Contains(tc.runTrace, hex.EncodeToString(s.TraceId)) {
				t.Errorf("trace %x, want the accepted traceparent's", s.TraceId)
			}
			if len(s.ParentSpanId) == 0 || hex.EncodeToString(s.ParentSpanId) == "00f067aa0ba902b7" {
				t.Errorf("parent %x, want the step's span", s.ParentSpanId)
			}
			checks := map[string]string{"wend.workflow": "order", "wend.workflow_id": "order-1", "wend.run_id": "r1",
				"wend.step": "steps[1]", "wend.plugin": "pay", "wend.activity": "charge", "wend.attempt": "2",
				"wend.outcome": tc.outcome, "wend.failure.type": tc.typ}
			for k, v := range checks {
				if got := otlptest.Attr(s, k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if s.Name != "try pay.charge #2" {
				t.Errorf("name %q", s.Name)
			}
			if failed := s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR; failed != (tc.err != nil) {
				t.Errorf("status %v, want an error status only on a failure", s.GetStatus())
			}
		})
	}
}

// TestCallTraceParentWithoutTraces: a worker that exports nothing still passes the plugin
// the try's traceparent when the run was started with one, and none otherwise, as locally.
func TestCallTraceParentWithoutTraces(t *testing.T) {
	for _, tc := range []struct{ name, runTrace, want string }{
		{"started with a traceparent", accepted, tracing.TryParent("r1", accepted, "e1", 1)},
		{"started without", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugin := &fakePlugins{out: json.RawMessage(`1`)}
			env := tracedEnv(nil, plugin)
			call := history.ActivityCall{Plugin: "pay", Activity: "charge", RunID: "r1", ActivityExecutionID: "e1", Attempt: 1}
			if _, err := env.ExecuteActivity(wire.ActivityCall, wire.Call{ActivityCall: call, RunTraceParent: tc.runTrace}); err != nil {
				t.Fatal(err)
			}
			if plugin.got.TraceParent != tc.want {
				t.Errorf("plugin got traceparent %q, want %q", plugin.got.TraceParent, tc.want)
			}
		})
	}
}

func tracedEnv(p *tracing.Provider, plugins Plugins) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	(&Activities{Plugins: plugins, Traces: p}).Register(env)
	return env
}

func shutdown(t *testing.T, p *tracing.Provider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTryOutcome: the outcome and failure a try's span gets match how the driver records
// the try (driver's tryOutcome), for each way a try ends on the worker.
func TestTryOutcome(t *testing.T) {
	live := wire.Call{ActivityCall: history.ActivityCall{Attempt: 3}, Liveness: true}
	old := wire.Call{ActivityCall: history.ActivityCall{Attempt: 3}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer stop()
	stopped := &history.ActivityError{Category: history.CategoryInternal, Type: wire.WorkerStopped, Message: "the worker stopped"}
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		in       wire.Call
		err      error
		outcome  string
		category string
		typ      string
	}{
		{"completed", context.Background(), live, nil, "completed", "", ""},
		{"plugin error", context.Background(), live, &history.ActivityError{Type: "Refused", Message: "no"}, "failed", history.CategoryActivity, "Refused"},
		{"plugin start", context.Background(), live, &history.ActivityError{Category: history.CategoryPluginStart, Type: "NotFound"}, "failed", history.CategoryPluginStart, "NotFound"},
		{"not an activity error", context.Background(), live, errors.New("pipe closed"), "failed", history.CategoryInternal, "WorkerError"},
		{"step heartbeat_timeout", context.Background(), live, &history.ActivityError{Category: history.CategoryTimeout, Type: "heartbeat_timeout"}, "timed_out", history.CategoryTimeout, "heartbeat_timeout"},
		{"start-to-close timeout", expired, live, context.DeadlineExceeded, "timed_out", history.CategoryTimeout, "timeout"},
		{"cancelled by wend", cancelled, live, context.Canceled, "cancelled", "", ""},
		{"grace ran out", cancelled, live, stopped, "interrupted", "", "Interrupted"},
		{"grace ran out, run before liveness", cancelled, old, stopped, "failed", history.CategoryInternal, wire.WorkerStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outcome, f := tryOutcome(tc.ctx, tc.in, tc.err)
			if outcome != tc.outcome {
				t.Errorf("outcome %q, want %q", outcome, tc.outcome)
			}
			var cat, typ string
			if f != nil {
				cat, typ = f.Category, f.Type
			}
			if cat != tc.category || typ != tc.typ {
				t.Errorf("failure %+v, want category %q type %q", f, tc.category, tc.typ)
			}
		})
	}
}
