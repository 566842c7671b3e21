package driver

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

var childSpecs = map[string]string{
	"/flows/child.wend.yaml": `wend: v1
name: child
plugins: {p: ./p}
steps:
  - id: x
    activity: p.echo
    with: "${{ input.n * 2 }}"
output: "${{ steps.x.output }}"
`,
	"/flows/failing.wend.yaml": "wend: v1\nname: failing\nsteps:\n  - fail: child says no\n",
	"/flows/strict.wend.yaml":  "wend: v1\nname: strict\ninput:\n  type: object\n  required: [n]\nsteps:\n  - fail: never runs\n",
	"/flows/waiting.wend.yaml": `wend: v1
name: waiting
plugins: {p: ./p}
steps:
  - activity: p.echo
    with: child did this
    compensate_with:
      - activity: p.echo
        with: child undid it
  - wait_for_signal: never
`,
}

func queryEventsOf(t *testing.T, e *testsuite.TestWorkflowEnvironment, id string) []history.Event {
	t.Helper()
	v, err := e.QueryWorkflowByID(id, wire.QueryEvents, wire.EventsQuery{})
	if err != nil {
		t.Fatalf("query %s: %v", id, err)
	}
	var page wire.EventsPage
	if err := v.Get(&page); err != nil || page.More {
		t.Fatalf("query %s: %v, more %v", id, err, page.More)
	}
	checkHistory(t, page.Events)
	return page.Events
}

// childIDOf is the workflow id the interpreter gave the child of a step.
func childIDOf(t *testing.T, evs []history.Event, step string) string {
	t.Helper()
	for _, ev := range ofType(evs, history.ChildWorkflowScheduled) {
		if ev.Step == step {
			cs, _ := history.DataOf[history.ChildSchedule](ev)
			return cs.WorkflowID
		}
	}
	t.Fatalf("no child scheduled at %s", step)
	return ""
}

func TestRunWorkflowChild(t *testing.T) {
	src := sim.Head + `steps:
  - id: c
    run_workflow: ./child.wend.yaml
    with: {n: 3}
  - id: bad
    run_workflow: ./failing.wend.yaml
    catch:
      - activity: p.echo
        with: "${{ error.message }}"
  - id: missing
    run_workflow: ./missing.wend.yaml
    catch:
      - activity: p.echo
        with: "${{ error.message }}"
  - id: strict
    run_workflow: ./strict.wend.yaml
    with: {m: 1}
    catch:
      - activity: p.echo
        with: "${{ error.message }}"
output: "${{ steps.c.output }}"
`
	e, p := newEnv(t)
	spy := &memoSpy{memos: map[string]map[string]any{}}
	e.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute, Interceptors: []interceptor.WorkerInterceptor{spy}})
	evs := run(t, e, startInput(src, nil, childSpecs))
	if got := output(t, e); got != "6" {
		t.Fatalf("output %s", got)
	}
	done := ofType(evs, history.ChildWorkflowCompleted)
	if len(done) != 1 {
		t.Fatalf("%d children completed", len(done))
	}
	if c, _ := history.DataOf[history.Closed](done[0]); c.RunID == "" {
		t.Fatal("ChildWorkflowCompleted names no child run")
	}
	var caught []string
	for _, tr := range p.triesOf("echo") {
		if tr.Call.WorkflowID == "wf" {
			caught = append(caught, string(tr.Call.Input))
		}
	}
	if len(caught) != 3 || !strings.Contains(caught[0], "child says no") || !strings.Contains(caught[1], "not in the run's start input") ||
		!strings.Contains(caught[2], "strict.wend.yaml: invalid input") {
		t.Fatalf("catches saw %q", caught)
	}
	// The child ran the text from the parent's start input, with its own history.
	childID := childIDOf(t, evs, "steps[0]")
	child := queryEventsOf(t, e, childID)
	st, _ := history.DataOf[history.Started](child[0])
	if st.SpecSource != childSpecs["/flows/child.wend.yaml"] || st.ParentRunID == "" || st.ParentStep != "steps[0]" {
		t.Fatalf("child started %+v", st)
	}
	// A list shows the child without asking a worker.
	want := map[string]any{wire.MemoName: "child", wire.MemoSpecFile: "/flows/child.wend.yaml", wire.MemoSpecSHA256: st.SpecSHA256}
	if got := spy.memos[childID]; !maps.Equal(got, want) {
		t.Fatalf("child memo %v, want %v", got, want)
	}
}

// TestChildCancelledWithParent: a run_workflow branch cancelled by its sibling's failure
// cancels the child, which compensates before the parent closes.
func TestChildCancelledWithParent(t *testing.T) {
	src := sim.Head + `steps:
  - parallel:
      - run_workflow: ./waiting.wend.yaml
      - steps:
          - delay: 1m
          - fail: sibling failed
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, nil, childSpecs))
	c := wendFailure(t, e, history.WorkflowFailed)
	if c.Failure == nil || !strings.Contains(c.Failure.Message, "sibling failed") {
		t.Fatalf("failure %+v", c.Failure)
	}
	if n := len(ofType(evs, history.ChildWorkflowCancelRequested)); n != 1 {
		t.Fatalf("%d child cancels recorded", n)
	}
	child := queryEventsOf(t, e, childIDOf(t, evs, "steps[0].parallel[0]"))
	if last := child[len(child)-1]; last.Type != history.WorkflowCancelled {
		t.Fatalf("child closed with %s", last.Type)
	}
	var inputs []string
	for _, tr := range p.triesOf("echo") {
		inputs = append(inputs, string(tr.Call.Input))
	}
	if !slices.Equal(inputs, []string{`"child did this"`, `"child undid it"`}) {
		t.Fatalf("child's plugin calls %q", inputs)
	}
}

// awaiter fakes the worker's ActivityAwait: "done" completed, "failed" failed, "slowpoke"
// never closes (it returns once Temporal cancels the wait).
type awaiter struct{ p *plugin }

func (a awaiter) await(ctx context.Context, in wire.AwaitInput) (wire.AwaitResult, error) {
	switch in.WorkflowID {
	case "done":
		return wire.AwaitResult{RunID: "r-done", Status: history.StatusCompleted, Closed: history.Closed{Output: json.RawMessage(`{"v":1}`)}}, nil
	case "failed":
		return wire.AwaitResult{RunID: "r-failed", Status: history.StatusFailed, Closed: history.Closed{
			Failure: &history.Failure{Category: history.CategoryActivity, Type: "Boom", Message: "it broke"}}}, nil
	}
	return wire.AwaitResult{}, a.p.block(ctx, activity.GetInfo(ctx).ActivityID, 6*time.Second)
}

func TestWaitForWorkflow(t *testing.T) {
	src := sim.Head + `steps:
  - id: a
    wait_for_workflow: done
  - id: b
    wait_for_workflow: "${{ 'fail' + 'ed' }}"
    catch:
      - activity: p.echo
        with: "${{ error.message }}"
  - id: c
    wait_for_workflow: slowpoke
    timeout: 300ms
    catch:
      - activity: p.echo
        with: "${{ error.type }}"
output: "${{ steps.a.output }}"
`
	e, p := newEnv(t)
	e.RegisterActivityWithOptions(awaiter{p}.await, activity.RegisterOptions{Name: wire.ActivityAwait})
	evs := run(t, e, startInput(src, nil, nil))
	if got := output(t, e); got != `{"v":1}` {
		t.Fatalf("output %s", got)
	}
	var caught []string
	for _, tr := range p.triesOf("echo") {
		caught = append(caught, string(tr.Call.Input))
	}
	if len(caught) != 2 || !strings.Contains(caught[0], "r-failed failed: it broke") || caught[1] != `"Timeout"` {
		t.Fatalf("catches saw %q", caught)
	}
	// The timed-out wait's await activity is cancelled, not left holding a worker slot.
	if !slices.Contains(p.cancelledIDs(), "wait/steps[2]") {
		t.Fatalf("await of the timed-out wait not cancelled (cancelled: %v)", p.cancelledIDs())
	}
	if n := len(ofType(evs, history.WorkflowWaitCompleted)) + len(ofType(evs, history.WorkflowWaitFailed)); n != 2 {
		t.Fatalf("%d wait outcomes recorded, want 2 (none for the timed-out wait)", n)
	}
}

// memoSpy records the memo of every child workflow the driver starts (the test environment
// does not hand a child its memo).
type memoSpy struct {
	interceptor.WorkerInterceptorBase
	memos map[string]map[string]any
}

func (m *memoSpy) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &memoInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, spy: m}
}

type memoInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	spy *memoSpy
}

func (i *memoInbound) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&memoOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, spy: i.spy})
}

type memoOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	spy *memoSpy
}

func (o *memoOutbound) ExecuteChildWorkflow(ctx workflow.Context, typ string, args ...any) workflow.ChildWorkflowFuture {
	opts := workflow.GetChildWorkflowOptions(ctx)
	o.spy.memos[opts.WorkflowID] = opts.Memo
	return o.Next.ExecuteChildWorkflow(ctx, typ, args...)
}
