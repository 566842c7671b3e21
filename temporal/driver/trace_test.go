package driver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
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
