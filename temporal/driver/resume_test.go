package driver

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/temporal"
)

// failedThenRetried runs src until it fails for good, builds the retry's start input as the
// backend does (interpreter.PlanRetry over the failed run's wend history), and runs the retry
// in a second environment started `later` after the first: the fake plugin's fail activity
// succeeds from attempt 2 on, as a fixed downstream would.
func failedThenRetried(t *testing.T, src string, later time.Duration) (failed, retried []history.Event, p1, p2 *plugin, in wire.StartInput) {
	t.Helper()
	e1, p1 := newEnv(t)
	failed = run(t, e1, startInput(src, nil, nil))
	wendFailure(t, e1, history.WorkflowFailed)
	st, _ := history.DataOf[history.Started](failed[0])
	plan, err := interpreter.PlanRetry(st.RunID, failed)
	if err != nil {
		t.Fatal(err)
	}
	in = wire.StartInput{Started: plan.Started, Prefix: plan.Prefix, RetryActivity: plan.ActivityExecID}
	e2, p2 := newEnv(t)
	e2.SetStartTime(sim.T0.Add(later))
	retried = run(t, e2, in)
	if got := output(t, e2); got == "" {
		t.Fatal("no output")
	}
	return failed, retried, p1, p2, in
}

// TestRetryResumesFailedRunOnTemporal: wend retry on Temporal. The retried step keeps its
// activity_execution_id (the plugin's idempotency key) and tries as attempt 2, completed
// steps are not called again, and the new run's history is the failed run's prefix (seq from
// 1, the new WorkflowStarted payload) then RetryRequested, as a local retry writes it.
func TestRetryResumesFailedRunOnTemporal(t *testing.T) {
	src := sim.Head + `steps:
  - id: a
    activity: p.echo
    with: {n: 1}
  - id: b
    activity: p.fail
    with: {type: Down, until: 2, non_retryable: true}
output: "${{ steps.a.output.n }}"
`
	failed, retried, p1, p2, in := failedThenRetried(t, src, time.Hour)
	if n := len(p2.triesOf("echo")); n != 0 {
		t.Fatalf("the completed step ran %d more times", n)
	}
	old, now := p1.triesOf("fail"), p2.triesOf("fail")
	if len(old) != 1 || len(now) != 1 {
		t.Fatalf("fail tried %d times, then %d times on retry", len(old), len(now))
	}
	execID := old[0].Call.ActivityExecutionID
	if now[0].Call.ActivityExecutionID != execID || now[0].Call.Attempt != 2 || now[0].ActivityID != interpreter.TaskID(execID, 2) {
		t.Fatalf("retried try %+v, want exec id %s attempt 2", now[0].Call, execID)
	}
	c := closedOfRun(t, retried)
	if retried[len(retried)-1].Type != history.WorkflowCompleted || string(c.Output) != "1" {
		t.Fatalf("retry closed %s %s", retried[len(retried)-1].Type, c.Output)
	}
	// The prefix is copied as is, but for the new run's payload.
	for i, ev := range in.Prefix[1:] {
		if got := retried[i+1]; !reflect.DeepEqual(got, ev) {
			t.Fatalf("event %d: %+v, want the failed run's %+v", i+2, got, ev)
		}
	}
	st, _ := history.DataOf[history.Started](retried[0])
	oldSt, _ := history.DataOf[history.Started](failed[0])
	if st.RetryOf != oldSt.RunID || st.ExecBase != oldSt.RunID || !st.RunStarted.Equal(failed[0].Time) || !retried[0].Time.Equal(failed[0].Time) {
		t.Fatalf("retry started %+v at %s", st, retried[0].Time)
	}
	rr := retried[len(in.Prefix)]
	if rr.Type != history.RetryRequested || rr.Seq != uint64(len(in.Prefix)+1) || !rr.Time.Equal(sim.T0.Add(time.Hour)) {
		t.Fatalf("after the prefix: %s seq %d at %s", rr.Type, rr.Seq, rr.Time)
	}
}

// TestRetryReopensPendingWork: work open when the step failed (a parallel branch's delay) is
// started again by the retry, from the recorded schedule: its timer fires at the time the
// failed run armed it for, not a full delay after the retry.
func TestRetryReopensPendingWork(t *testing.T) {
	src := sim.Head + `steps:
  - parallel:
      - activity: p.fail
        with: {type: Down, until: 2, non_retryable: true}
      - delay: 1h
  - id: after
    activity: p.echo
    with: 2
output: "${{ steps.after.output }}"
`
	_, retried, _, p2, _ := failedThenRetried(t, src, 10*time.Minute)
	after := p2.triesOf("echo")
	if len(after) != 1 || !after[0].At.Equal(sim.T0.Add(time.Hour)) {
		t.Fatalf("step after the parallel ran %d times, first at %v; want once at the delay's end %s", len(after), after, sim.T0.Add(time.Hour))
	}
	if n := len(ofType(retried, history.TimerFired)); n != 1 {
		t.Fatalf("%d timers fired", n)
	}
}

// TestRetryStartInputOverLimitRefused: a retry whose start input (the prefix above all) is over
// MaxPayloadBytes fails at once with a non-retryable error naming the limit, before deciding
// anything.
func TestRetryStartInputOverLimitRefused(t *testing.T) {
	src := sim.Head + "steps:\n  - activity: p.fail\n    with: {type: Down, non_retryable: true}\n"
	e1, _ := newEnv(t)
	failed := run(t, e1, startInput(src, nil, nil))
	plan, err := interpreter.PlanRetry("run-1", failed)
	if err != nil {
		t.Fatal(err)
	}
	in := wire.StartInput{Started: plan.Started, Prefix: plan.Prefix, RetryActivity: plan.ActivityExecID}
	setVar(t, &MaxPayloadBytes, encodedSize(in)-1)
	e2, p2 := newEnv(t)
	e2.ExecuteWorkflow(wire.WorkflowType, in)
	var ae *temporal.ApplicationError
	if err := e2.GetWorkflowError(); !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != history.CategoryStructuralLimit ||
		!strings.Contains(ae.Error(), "byte limit") {
		t.Fatalf("workflow error %v", err)
	}
	if len(p2.triesOf("fail")) != 0 {
		t.Fatal("an over-limit retry ran its activity")
	}
}
