package worker

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/driver"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/testkit/otlptest"
	"github.com/wendflow/wend/tracing"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
)

// flakyPlugins answers echo with its input and fails flaky's first try.
type flakyPlugins struct {
	mu    sync.Mutex
	tries int
}

func (f *flakyPlugins) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	if c.Activity == "flaky" {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.tries++; f.tries == 1 {
			return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
		}
	}
	return c.Input, nil
}

const treeWorkflow = `wend: v1
name: order
plugins: {p: ./p}
steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: b, activity: p.flaky, retry: {tries: 2, backoff: [1s]}}
  - {id: d, delay: 1s}
`

// TestSpanTreeOnTemporal: a worker that exports traces and hosts both the workflow and the
// activities exports the tree a local run exports: the run's span under the traceparent it
// was started with, a span per step (activity or delay) under it, a span per try under its
// step, all in the traceparent's trace, each span once.
func TestSpanTreeOnTemporal(t *testing.T) {
	rcv := startReceiver(t)
	p, err := tracing.FromEnv(context.Background(), os.Getenv, io.Discard)
	if err != nil || p == nil {
		t.Fatalf("FromEnv = %v, %v", p, err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Under -race on a loaded machine the first spec load can pass the SDK's 1 s default.
	env.SetWorkerOptions(sdkworker.Options{DeadlockDetectionTimeout: time.Minute})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "order-1"})
	driver.RegisterWith(env, driver.Options{Spans: func(run history.Run, started history.Event) driver.Spans {
		return p.RunSpans(run, started)
	}})
	(&Activities{Plugins: &flakyPlugins{}, Traces: p}).Register(env)
	env.ExecuteWorkflow(wire.WorkflowType, wire.StartInput{Started: history.Started{WorkflowID: "order-1",
		SpecFile: "/flows/order.wend.yaml", SpecSource: treeWorkflow, TraceParent: accepted}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	shutdown(t, p)

	spans := map[string]*tracepb.Span{}
	for _, sp := range rcv.Spans() {
		if spans[sp.Name] != nil {
			t.Errorf("span %q exported twice", sp.Name)
		}
		spans[sp.Name] = sp
	}
	want := []struct{ name, parent, kind, outcome string }{
		{"run order", "", "", "completed"},
		{"step steps[0]", "run order", "activity", "completed"},
		{"try p.echo #1", "step steps[0]", "activity", "completed"},
		{"step steps[1]", "run order", "activity", "completed"},
		{"try p.flaky #1", "step steps[1]", "activity", "failed"},
		{"try p.flaky #2", "step steps[1]", "activity", "completed"},
		{"step steps[2]", "run order", "delay", "completed"},
	}
	if len(spans) != len(want) {
		t.Errorf("exported %d spans, want %d", len(spans), len(want))
	}
	for _, w := range want {
		sp := spans[w.name]
		if sp == nil {
			t.Errorf("no span %q", w.name)
			continue
		}
		if got := hex.EncodeToString(sp.TraceId); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s: trace %s, want the traceparent's", w.name, got)
		}
		parent := "00f067aa0ba902b7" // the run's parent is the caller's span
		if w.parent != "" && spans[w.parent] != nil {
			parent = hex.EncodeToString(spans[w.parent].SpanId)
		}
		if got := hex.EncodeToString(sp.ParentSpanId); got != parent {
			t.Errorf("%s: parent %s, want %s (%s)", w.name, got, parent, w.parent)
		}
		if got := otlptest.Attr(sp, "wend.outcome"); got != w.outcome {
			t.Errorf("%s: outcome %q, want %q", w.name, got, w.outcome)
		}
		if got := otlptest.Attr(sp, "wend.step_kind"); got != w.kind {
			t.Errorf("%s: step kind %q, want %q", w.name, got, w.kind)
		}
		if otlptest.Attr(sp, "wend.workflow") != "order" || otlptest.Attr(sp, "wend.workflow_id") != "order-1" || otlptest.Attr(sp, "wend.run_id") == "" {
			t.Errorf("%s: workflow %q id %q run %q", w.name, otlptest.Attr(sp, "wend.workflow"), otlptest.Attr(sp, "wend.workflow_id"), otlptest.Attr(sp, "wend.run_id"))
		}
	}
}
