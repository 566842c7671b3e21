package driver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/tracing/traceparent"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// TestTryCarriesTraceContext: every try's activity input names the workflow and the
// traceparent the run was started with, which a tracing worker needs to export the try in
// the run's trace and to pass the plugin its traceparent.
func TestTryCarriesTraceContext(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	src := "wend: v1\nname: order\nplugins: {p: {command: [./p]}}\nsteps:\n  - {id: a, activity: p.echo, with: 1}\n  - {id: b, activity: p.echo, with: 2}\n"
	for _, traceparent := range []string{tp, ""} {
		t.Run("traceparent "+traceparent, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			e := s.NewTestWorkflowEnvironment()
			e.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
			e.SetStartTime(sim.T0)
			e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "wf"})
			var mu sync.Mutex
			var calls []wire.Call
			record := func(_ context.Context, c wire.Call) (wire.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, c)
				return wire.Result{Output: c.Input}, nil
			}
			Register(e)
			e.RegisterActivityWithOptions(record, activity.RegisterOptions{Name: wire.ActivityCallBuild})
			in := startInput(src, nil, nil)
			in.Started.TraceParent = traceparent
			e.ExecuteWorkflow(wire.WorkflowType, in)
			if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
				t.Fatalf("workflow: completed %v, error %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
			}
			if len(calls) != 2 {
				t.Fatalf("%d tries, want 2", len(calls))
			}
			for _, c := range calls {
				if c.Workflow != "order" || c.RunTraceParent != traceparent {
					t.Errorf("try %s: workflow %q, run traceparent %q; want order, %q", c.StepPath, c.Workflow, c.RunTraceParent, traceparent)
				}
			}
		})
	}
}

// TestChildJoinsParentTrace: a child of a run started with a traceparent starts in the
// parent's trace under its run_workflow step's span, as locally; a child of a run started
// without one gets none.
func TestChildJoinsParentTrace(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	src := sim.Head + "steps:\n  - id: c\n    run_workflow: ./child.wend.yaml\n    with: {n: 3}\n"
	for _, parentTrace := range []string{tp, ""} {
		t.Run("traceparent "+parentTrace, func(t *testing.T) {
			e, _ := newEnv(t)
			in := startInput(src, nil, childSpecs)
			in.Started.TraceParent = parentTrace
			evs := run(t, e, in)
			parent, _ := history.DataOf[history.Started](evs[0])
			child, _ := history.DataOf[history.Started](queryEventsOf(t, e, childIDOf(t, evs, "steps[0]"))[0])
			want := ""
			if parentTrace != "" {
				want = traceparent.ForChild(parent.RunID, parentTrace, "steps[0]")
			}
			if child.TraceParent != want {
				t.Fatalf("child started with traceparent %q, want %q", child.TraceParent, want)
			}
			if parentTrace != "" && !strings.HasPrefix(child.TraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
				t.Fatalf("child traceparent %q is not in the parent's trace", child.TraceParent)
			}
		})
	}
}
