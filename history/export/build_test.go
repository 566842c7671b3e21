package export_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/sim"
)

func js(t *testing.T, v json.RawMessage) string {
	t.Helper()
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		t.Fatalf("bad JSON %q: %v", v, err)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func outcomes(a export.Activity) []string {
	var out []string
	for _, at := range a.Attempts {
		out = append(out, at.Outcome)
	}
	return out
}

type failureRow struct {
	EventType, Category, Propagation string
	NonRetryable                     bool
	Attempt                          int
}

func failureRows(doc *export.Document) []failureRow {
	var out []failureRow
	for _, f := range doc.Failures {
		out = append(out, failureRow{f.EventType, f.FailureCategory, f.PropagationKind, f.NonRetryable, f.Attempt})
	}
	return out
}

func TestCompletedRun(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: a
    activity: p.echo
    with: {n: "${{ input.n }}"}
  - id: b
    activity: p.echo
    with: "${{ steps.a.output.n + 1 }}"
output: {b: "${{ steps.b.output }}"}
`, map[string]any{"n": 1})
	s.RunActivities(sim.Echo)
	doc := exportOf(t, s)

	w := doc.Workflow
	eq(t, "schema", doc.Schema, "wend.history-export/v1")
	eq(t, "ids", []string{w.WorkflowID, w.RunID, w.Name, w.SpecFile}, []string{"wf", "run1", "t", "test.wend.yaml"})
	eq(t, "status", []string{w.Status, w.ClosedReason}, []string{"completed", "completed"})
	eq(t, "input", js(t, w.Input), `{"n":1}`)
	eq(t, "output", js(t, w.Output), `{"b":2}`)
	eq(t, "times", []time.Time{w.StartedAt, w.ClosedAt, w.ExecutionStartedAt}, []time.Time{sim.T0, sim.T0, sim.T0})
	if len(w.SpecSHA256) != 64 || w.Timeouts != nil || w.Failure != nil {
		t.Errorf("workflow = %+v", w)
	}
	eq(t, "events", len(doc.HistoryEvents), 6)
	eq(t, "event 2", doc.HistoryEvents[1], export.Event{Seq: 2, Type: "ActivityScheduled", Time: sim.T0, Step: "steps[0]",
		ActivityExecutionID: "run1:steps[0]", Attempt: 1, Data: s.Events[1].Data})
	eq(t, "activities", len(doc.Activities), 2)
	a := doc.Activities[1]
	eq(t, "activity", []any{a.ActivityExecutionID, a.Step, a.Plugin, a.Activity, a.Status, a.Tries, a.ScheduledSeq},
		[]any{"run1:steps[1]", "steps[1]", "p", "echo", "completed", 1, uint64(4)})
	eq(t, "activity io", []string{js(t, a.Input), js(t, a.Output)}, []string{"2", "2"})
	eq(t, "attempt", a.Attempts, []export.Attempt{{Attempt: 1, ActivityAttemptID: "run1:steps[1]#1", Outcome: "completed",
		ScheduledAt: sim.T0, EndedAt: sim.T0, EndedSeq: 5}})
	m := doc.OperatorMetrics
	eq(t, "activity metrics", m.Activities, export.ActivityMetrics{Total: 2, Completed: 2, Attempts: 2})
	eq(t, "backlog", m.Backlog, export.Backlog{})
	eq(t, "history", m.History, export.HistoryMetrics{Events: 6, LastSeq: 6, PayloadBytes: payloadBytes(s.Events), LastEventAt: sim.T0})
	eq(t, "failures", len(doc.Failures), 0)
}

func payloadBytes(evs []history.Event) int {
	n := 0
	for _, e := range evs {
		n += len(e.Data)
	}
	return n
}

func gatewayDown(_ string, _ any, attempt int) (any, *history.Failure) {
	if attempt < 3 {
		return nil, &history.Failure{Category: history.CategoryActivity, Type: "GatewayDown", Message: "temporary gateway failure"}
	}
	return map[string]any{"ok": true}, nil
}

func TestRetriesThenSuccess(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: charge
    activity: p.charge
    retry: {tries: 3, backoff: [5s, 30s]}
`, nil)
	s.Step(gatewayDown)

	// While the retry waits: the execution is retrying and counted in the backlog.
	mid := exportOf(t, s)
	a := mid.Activities[0]
	eq(t, "status while waiting", a.Status, "retrying")
	eq(t, "next_attempt_at", a.NextAttemptAt, sim.T0.Add(5*time.Second))
	eq(t, "outcomes while waiting", outcomes(a), []string{"failed", "scheduled"})
	eq(t, "retry after try 1", *a.Attempts[0].Retry, export.Retry{Seq: 4, RetryOfTaskID: "run1:steps[0]#1",
		RetryAfterAttemptID: "run1:steps[0]#1", RetryAfterAttempt: 1, RetryBackoffSeconds: 5,
		AvailableAt: sim.T0.Add(5 * time.Second), NextAttempt: 2})
	eq(t, "try 2", a.Attempts[1], export.Attempt{Attempt: 2, ActivityAttemptID: "run1:steps[0]#2", Outcome: "scheduled",
		ScheduledAt: sim.T0.Add(5 * time.Second)})
	m := mid.OperatorMetrics
	eq(t, "retrying", []int{m.Activities.Retrying, m.Backlog.RetryingActivities, m.Backlog.PendingActivities, m.Activities.FailedAttempts},
		[]int{1, 1, 1, 1})
	eq(t, "workflow while waiting", []string{mid.Workflow.Status, mid.Workflow.ClosedReason}, []string{"running", ""})
	if !mid.Workflow.ClosedAt.IsZero() {
		t.Error("an open run has closed_at")
	}

	s.RunActivities(gatewayDown)
	doc := exportOf(t, s)
	a = doc.Activities[0]
	eq(t, "status", a.Status, "completed")
	eq(t, "outcomes", outcomes(a), []string{"failed", "failed", "completed"})
	eq(t, "try 1 error", *a.Attempts[0].Error, export.AttemptError{Type: "GatewayDown", Message: "temporary gateway failure",
		FailureCategory: "activity"})
	eq(t, "retry after try 2", []any{a.Attempts[1].Retry.RetryBackoffSeconds, a.Attempts[1].Retry.AvailableAt},
		[]any{30.0, sim.T0.Add(35 * time.Second)})
	eq(t, "try 3 times", []time.Time{a.Attempts[2].ScheduledAt, a.Attempts[2].EndedAt}, []time.Time{sim.T0.Add(35 * time.Second), sim.T0.Add(35 * time.Second)})
	if a.Attempts[2].Retry != nil || a.Attempts[2].Error != nil || !a.NextAttemptAt.IsZero() {
		t.Errorf("the successful try = %+v, next_attempt_at %v", a.Attempts[2], a.NextAttemptAt)
	}
	eq(t, "activity metrics", doc.OperatorMetrics.Activities, export.ActivityMetrics{Total: 1, Completed: 1, Attempts: 3,
		FailedAttempts: 2, Retries: 2})
	eq(t, "failures", failureRows(doc), []failureRow{
		{"ActivityAttemptFailed", "activity", "activity", false, 1},
		{"ActivityAttemptFailed", "activity", "activity", false, 2},
	})
	eq(t, "failure where", []string{doc.Failures[1].Step, doc.Failures[1].ActivityExecutionID}, []string{"steps[0]", "run1:steps[0]"})
}

const chargeSpec = sim.Head + `
steps:
  - id: charge
    activity: p.charge
    with: {amount: 42}
    retry: {tries: 5, backoff: [1s], non_retryable: [CardDeclined]}
`

// declined fails try 1 with a transient error and try 2 with a type the step lists as
// non-retryable (the plugin itself does not mark it).
func declined(_ string, _ any, attempt int) (any, *history.Failure) {
	if attempt == 1 {
		return nil, &history.Failure{Category: history.CategoryActivity, Type: "GatewayDown", Message: "gateway timeout"}
	}
	return nil, &history.Failure{Category: history.CategoryActivity, Type: "CardDeclined", Message: "card declined",
		Details: json.RawMessage(`{"code":"05"}`)}
}

func TestRetriesThenNonRetryableFailure(t *testing.T) {
	s := sim.New(t, chargeSpec, nil)
	s.RunActivities(declined)
	doc := exportOf(t, s)

	w := doc.Workflow
	eq(t, "status", []string{w.Status, w.ClosedReason}, []string{"failed", "failed"})
	eq(t, "run failure", []any{w.Failure.Type, w.Failure.NonRetryable, w.Failure.EventType, w.Failure.Attempt},
		[]any{"CardDeclined", true, "WorkflowFailed", 2})
	if w.Output != nil {
		t.Errorf("a failed run has output %s", w.Output)
	}
	a := doc.Activities[0]
	eq(t, "activity", []any{a.Status, a.NonRetryable, a.Failure.EventType, a.Tries}, []any{"failed", true, "ActivityFailed", 5})
	eq(t, "outcomes", outcomes(a), []string{"failed", "failed"})
	// The last try's error carries the final verdict: non-retryable because the step lists it.
	eq(t, "try 2 error", *a.Attempts[1].Error, export.AttemptError{Type: "CardDeclined", Message: "card declined",
		NonRetryable: true, FailureCategory: "activity"})
	eq(t, "try 1 non_retryable", a.Attempts[0].Error.NonRetryable, false)
	if a.Attempts[0].Retry == nil || a.Attempts[1].Retry != nil {
		t.Errorf("retries: %+v / %+v", a.Attempts[0].Retry, a.Attempts[1].Retry)
	}
	eq(t, "failures", failureRows(doc), []failureRow{
		{"ActivityAttemptFailed", "activity", "activity", false, 1},
		{"ActivityAttemptFailed", "activity", "activity", false, 2},
		{"ActivityFailed", "activity", "activity", true, 2},
		{"WorkflowFailed", "activity", "activity", true, 2},
	})
	eq(t, "details", js(t, doc.Failures[2].Details), `{"code":"05"}`)
	m := doc.OperatorMetrics
	eq(t, "activity metrics", m.Activities, export.ActivityMetrics{Total: 1, Failed: 1, Attempts: 2, FailedAttempts: 2,
		Retries: 1, NonRetryableFailures: 1})
	eq(t, "failure metrics", m.Failures, export.FailureMetrics{Total: 4, NonRetryable: 2, ByCategory: map[string]int{"activity": 4}})

	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "nonretryable.export.json", append(out, '\n'))
}

func TestPluginMarkedNonRetryableStopsAtOnce(t *testing.T) {
	s := sim.New(t, chargeSpec, nil)
	s.RunActivities(func(string, any, int) (any, *history.Failure) {
		return nil, &history.Failure{Category: history.CategoryActivity, Type: "Fraud", Message: "blocked", NonRetryable: true}
	})
	doc := exportOf(t, s)
	a := doc.Activities[0]
	eq(t, "attempts", len(a.Attempts), 1)
	eq(t, "non_retryable", []bool{a.NonRetryable, a.Attempts[0].Error.NonRetryable, doc.Failures[0].NonRetryable}, []bool{true, true, true})
	eq(t, "retries", doc.OperatorMetrics.Activities.Retries, 0)
}

func TestTimedOutAttempt(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: slow
    activity: p.slow
    timeout: 30s
    heartbeat_timeout: 10s
    retry: {tries: 2, backoff: [10s]}
`, nil)
	a0 := s.Tries()[0]
	at := func(typ history.EventType) history.Event {
		return history.Event{Type: typ, Step: a0.Step, ActivityExecutionID: a0.ActivityExecutionID, Attempt: 1}
	}
	s.Apply(at(history.ActivityStarted))
	mid := exportOf(t, s)
	eq(t, "running", []any{mid.Activities[0].Status, mid.Activities[0].Attempts[0].Outcome, mid.OperatorMetrics.Activities.Running,
		mid.OperatorMetrics.Backlog.PendingActivities}, []any{"running", "running", 1, 1})

	for _, d := range []time.Duration{10 * time.Second, 20 * time.Second} {
		s.Now = sim.T0.Add(d)
		s.Apply(at(history.ActivityHeartbeatRecorded))
	}
	s.Now = sim.T0.Add(30 * time.Second)
	s.RunActivities(func(_ string, _ any, attempt int) (any, *history.Failure) {
		if attempt == 1 {
			return nil, &history.Failure{Category: history.CategoryTimeout, PropagationKind: "timeout", Type: "timeout",
				Message: "attempt 1 exceeded its timeout"}
		}
		return "done", nil
	})
	doc := exportOf(t, s)
	a := doc.Activities[0]
	eq(t, "limits", []int64{a.TimeoutMS, a.HeartbeatTimeoutMS}, []int64{30000, 10000})
	eq(t, "outcomes", outcomes(a), []string{"timed_out", "completed"})
	try1 := a.Attempts[0]
	eq(t, "try 1 times", []time.Time{try1.ScheduledAt, try1.StartedAt, try1.LastHeartbeatAt, try1.EndedAt},
		[]time.Time{sim.T0, sim.T0, sim.T0.Add(20 * time.Second), sim.T0.Add(30 * time.Second)})
	eq(t, "try 1 heartbeats", try1.Heartbeats, 2)
	eq(t, "try 1 error", *try1.Error, export.AttemptError{Type: "timeout", Message: "attempt 1 exceeded its timeout", FailureCategory: "timeout"})
	eq(t, "try 2 due", a.Attempts[1].ScheduledAt, sim.T0.Add(40*time.Second))
	eq(t, "failures", failureRows(doc), []failureRow{{"ActivityTimedOut", "timeout", "timeout", false, 1}})
	m := doc.OperatorMetrics.Activities
	eq(t, "metrics", []int{m.TimedOutAttempts, m.FailedAttempts, m.Heartbeats, m.Completed}, []int{1, 1, 2, 1})
}

func TestSignalsPendingAndApplied(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: approval
    wait_for_signal: approve
    timeout: 1h
    set: {by: "${{ signal.by }}"}
  - delay: 10m
output: "${{ state.by }}"
`, nil)
	s.Signal("note", map[string]any{"text": "nobody waits for me"})
	s.Now = sim.T0.Add(time.Minute)
	s.Signal("approve", map[string]any{"by": "ann"})

	mid := exportOf(t, s)
	eq(t, "signals", mid.Signals, []export.Signal{
		{Name: "note", Data: json.RawMessage(`{"text":"nobody waits for me"}`), ReceivedSeq: 3, ReceivedAt: sim.T0, Pending: true},
		{Name: "approve", Data: json.RawMessage(`{"by":"ann"}`), ReceivedSeq: 4, ReceivedAt: sim.T0.Add(time.Minute),
			AppliedSeq: 5, AppliedAt: sim.T0.Add(time.Minute), AppliedToStep: "steps[0]"},
	})
	eq(t, "timers", mid.Timers, []export.Timer{
		{TimerID: "steps[0]#timeout", Step: "steps[0]", Purpose: "timeout", FireAt: sim.T0.Add(time.Hour), Status: "cancelled",
			ScheduledSeq: 2, ScheduledAt: sim.T0, ClosedSeq: 6, ClosedAt: sim.T0.Add(time.Minute)},
		{TimerID: "steps[1]", Step: "steps[1]", Purpose: "delay", FireAt: sim.T0.Add(11 * time.Minute), Status: "scheduled",
			ScheduledSeq: 7, ScheduledAt: sim.T0.Add(time.Minute)},
	})
	m := mid.OperatorMetrics
	eq(t, "signal metrics", m.Signals, export.SignalMetrics{Received: 2, Applied: 1, Pending: 1})
	eq(t, "timer metrics", []int{m.Timers.Pending, m.Backlog.PendingTimers}, []int{1, 1})

	s.FireTimers(sim.T0.Add(time.Hour))
	doc := exportOf(t, s)
	eq(t, "output", js(t, doc.Workflow.Output), `"ann"`)
	eq(t, "delay", doc.Timers[1].Status, "fired")
	eq(t, "signals still pending", doc.OperatorMetrics.Signals.Pending, 1)
}

const sagaSpec = sim.Head + `
compensation: {continue_on_error: true}
on_cancel:
  - activity: p.notify_cancelled
steps:
  - id: create_remote_user
    activity: p.create_remote_user
    set: {remote_user_id: "${{ output.id }}"}
    compensate_with:
      activity: p.delete_remote_user
      with: {id: "${{ state.remote_user_id }}"}
  - id: create_subscription
    activity: p.create_subscription
    set: {subscription_id: "${{ output.id }}"}
    compensate_with:
      activity: p.cancel_subscription
      with: {id: "${{ state.subscription_id }}"}
  - wait_for_signal: done
`

func sagaAnswers(act string, in any, _ int) (any, *history.Failure) {
	switch act {
	case "create_remote_user":
		return map[string]any{"id": "u-1"}, nil
	case "create_subscription":
		return map[string]any{"id": "s-1"}, nil
	case "cancel_subscription":
		return nil, &history.Failure{Category: history.CategoryActivity, Type: "BillingDown", Message: "billing unreachable", NonRetryable: true}
	}
	return in, nil
}

func TestCancelWithCompensationsOneFailing(t *testing.T) {
	s := sim.New(t, sagaSpec, nil)
	s.RunActivities(sagaAnswers)
	s.Now = sim.T0.Add(time.Minute)
	s.Cancel("user left")
	mid := exportOf(t, s)
	eq(t, "compensation running", []any{mid.Compensations[0].Step, mid.Compensations[0].Status, mid.OperatorMetrics.Compensations.Started},
		[]any{"steps[1]", "started", 1})

	s.RunActivities(sagaAnswers)
	doc := exportOf(t, s)
	w := doc.Workflow
	eq(t, "status", []string{w.Status, w.ClosedReason, w.CancelReason}, []string{"cancelled", "compensation_failed", "user left"})
	eq(t, "uncompensated", w.Uncompensated, []string{"steps[1]"})
	eq(t, "run failure", []string{w.Failure.FailureCategory, w.Failure.PropagationKind, w.Failure.Message},
		[]string{"cancelled", "cancelled", "cancelled: user left"})
	eq(t, "compensations", len(doc.Compensations), 2)
	c0, c1 := doc.Compensations[0], doc.Compensations[1]
	eq(t, "first", []any{c0.Step, c0.Reason, c0.OutcomeUnknown, c0.Status, c0.Failure.Type, c0.Failure.EventType},
		[]any{"steps[1]", "cancel", false, "failed", "BillingDown", "CompensationFailed"})
	eq(t, "second", []any{c1.Step, c1.Reason, c1.Status, c1.Failure == nil}, []any{"steps[0]", "cancel", "completed", true})
	if !c0.EndedAt.Equal(sim.T0.Add(time.Minute)) || c1.StartedSeq <= c0.EndedSeq {
		t.Errorf("compensation order/times: %+v %+v", c0, c1)
	}
	var acts []string
	for _, a := range doc.Activities {
		acts = append(acts, a.Activity+":"+a.Status)
	}
	eq(t, "activities", acts, []string{"create_remote_user:completed", "create_subscription:completed",
		"cancel_subscription:failed", "delete_remote_user:completed", "notify_cancelled:completed"})
	m := doc.OperatorMetrics
	eq(t, "compensation metrics", m.Compensations, export.CompensationMetrics{Total: 2, Completed: 1, Failed: 1})
	eq(t, "failure rows", failureRows(doc), []failureRow{
		{"ActivityAttemptFailed", "activity", "activity", true, 1},
		{"ActivityFailed", "activity", "activity", true, 1},
		{"CompensationFailed", "activity", "activity", true, 1},
		{"WorkflowCancelled", "cancelled", "cancelled", false, 0},
	})
}

func TestCancelInFlightIsCompensatedWithOutcomeUnknown(t *testing.T) {
	s := sim.New(t, sagaSpec, nil)
	s.Step(sagaAnswers) // create_remote_user done; create_subscription in flight
	s.Cancel("")
	s.RunActivities(sim.Echo)
	doc := exportOf(t, s)
	a := doc.Activities[1]
	eq(t, "in-flight activity", []any{a.Activity, a.Status, outcomes(a)}, []any{"create_subscription", "cancelled", []string{"cancelled"}})
	eq(t, "compensations", []any{doc.Compensations[0].Step, doc.Compensations[0].OutcomeUnknown, doc.Compensations[1].OutcomeUnknown},
		[]any{"steps[1]", true, false})
	eq(t, "status", []string{doc.Workflow.Status, doc.Workflow.ClosedReason}, []string{"cancelled", "cancelled"})
	eq(t, "cancelled metric", doc.OperatorMetrics.Activities.Cancelled, 1)
}

func TestWorkflowRunTimeout(t *testing.T) {
	s := sim.New(t, sim.Head+"timeouts: {run: 30m, execution: 2h}\nsteps:\n  - id: slow\n    activity: p.slow\n", nil)
	mid := exportOf(t, s)
	eq(t, "armed", *mid.Workflow.Timeouts, export.Timeouts{
		Run:       &export.Deadline{Seconds: 1800, Deadline: sim.T0.Add(30 * time.Minute), Status: "scheduled"},
		Execution: &export.Deadline{Seconds: 7200, Deadline: sim.T0.Add(2 * time.Hour), Status: "scheduled"},
	})
	eq(t, "backlog", mid.OperatorMetrics.Backlog, export.Backlog{PendingActivities: 1, PendingTimers: 2})

	s.FireTimers(sim.T0.Add(time.Hour))
	doc := exportOf(t, s)
	w := doc.Workflow
	eq(t, "status", []string{w.Status, w.ClosedReason, w.TimeoutKind}, []string{"failed", "timed_out", "run_timeout"})
	eq(t, "closed at", w.ClosedAt, sim.T0.Add(30*time.Minute))
	eq(t, "deadlines", []string{w.Timeouts.Run.Status, w.Timeouts.Execution.Status}, []string{"fired", "cancelled"})
	for _, tm := range doc.Timers {
		if tm.Step != "" || !strings.HasPrefix(tm.TimerID, "workflow#") {
			t.Errorf("timer %+v", tm)
		}
	}
	a := doc.Activities[0]
	eq(t, "activity", []any{a.Status, outcomes(a), a.ClosedAt}, []any{"cancelled", []string{"cancelled"}, sim.T0.Add(30 * time.Minute)})
	eq(t, "failures", failureRows(doc), []failureRow{{"WorkflowTimedOut", "timeout", "timeout", false, 0}})
	eq(t, "failure type", doc.Failures[0].Type, "WorkflowTimeout")
	m := doc.OperatorMetrics
	eq(t, "timers", m.Timers, export.TimerMetrics{Total: 2, Fired: 1, Cancelled: 1})
	eq(t, "backlog after", m.Backlog, export.Backlog{})
}

func TestChildrenAndWorkflowWaits(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("child.wend.yaml", []byte("wend: v1\nname: c\nsteps: [{delay: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := sim.New(t, sim.Head+`
steps:
  - id: child
    run_workflow: ./child.wend.yaml
    with: {x: 1}
  - wait_for_workflow: "${{ input.other }}"
`, map[string]any{"other": "billing-7"})
	s.Now = sim.T0.Add(time.Second)
	s.Apply(history.Event{Type: history.ChildWorkflowCompleted, Step: "steps[0]",
		Data: history.MustData(history.Closed{Output: json.RawMessage(`"ok"`), RunID: "c1"})})
	s.Apply(history.Event{Type: history.WorkflowWaitFailed, Step: "steps[1]",
		Data: history.MustData(history.Closed{RunID: "o1", Failure: &history.Failure{Category: history.CategoryActivity,
			PropagationKind: "activity", Type: "Boom", Message: "other failed"}})})
	doc := exportOf(t, s)
	eq(t, "children", len(doc.Children), 2)
	c0, c1 := doc.Children[0], doc.Children[1]
	eq(t, "child", []any{c0.Kind, c0.WorkflowID, c0.Step, c0.SpecFile, js(t, c0.Input), c0.Status, c0.RunID, js(t, c0.Output), c0.ClosedAt},
		[]any{"run_workflow", "wf/run1/steps[0]", "steps[0]", "child.wend.yaml", `{"x":1}`, "completed", "c1", `"ok"`, sim.T0.Add(time.Second)})
	eq(t, "wait", []any{c1.Kind, c1.WorkflowID, c1.Status, c1.RunID, c1.Failure.Message}, []any{"wait_for_workflow", "billing-7", "failed", "o1", "other failed"})
	eq(t, "failures", failureRows(doc), []failureRow{
		{"WorkflowWaitFailed", "activity", "activity", false, 0},
		{"WorkflowFailed", "child_workflow", "child_workflow", false, 0},
	})
	eq(t, "metrics", doc.OperatorMetrics.Children, export.ChildMetrics{Total: 2, Completed: 1, Failed: 1})
}

func TestBuildRejectsUnreadableHistories(t *testing.T) {
	s := sim.New(t, sim.Head+"steps: [{activity: p.x}]\n", nil)
	for name, evs := range map[string][]history.Event{
		"empty":            nil,
		"no start":         s.Events[1:],
		"data not JSON":    append(append([]history.Event{}, s.Events...), history.Event{Seq: 3, Type: history.RepairRequested, Data: json.RawMessage(`{`)}),
		"payload mistyped": {{Seq: 1, Type: history.WorkflowStarted, Data: json.RawMessage(`{"run_id": 7}`)}},
	} {
		if _, err := export.Build(history.Run{}, evs); err == nil {
			t.Errorf("%s: Build accepted it", name)
		}
	}
	if _, err := export.Build(history.Run{RunID: "other"}, s.Events); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("run record of another run: %v", err)
	}
}

// A damaged history (an outcome for an execution never scheduled) still exports: the event is
// listed and its failure counted, and nothing is invented for it.
func TestOrphanEventsStillExport(t *testing.T) {
	s := sim.New(t, sim.Head+"steps: [{wait_for_signal: go}]\n", nil)
	s.Events = append(s.Events, history.Event{Seq: uint64(len(s.Events) + 1), Type: history.ActivityAttemptFailed, Time: sim.T0,
		ActivityExecutionID: "ghost", Attempt: 1, Data: history.MustData(history.AttemptFailure{Failure: history.Failure{Message: "lost"}})})
	doc := exportOf(t, s)
	eq(t, "activities", len(doc.Activities), 0)
	eq(t, "failures", failureRows(doc), []failureRow{{"ActivityAttemptFailed", "unclassified", "activity", false, 1}})
}

// TestRedeliveryShowsBothDeliveries: a try interrupted by a crash and
// redelivered appears as two tries with their own attempt ids: the first interrupted, the
// second marked as a redelivery, so an auditor sees the activity may have run twice.
func TestRedeliveryShowsBothDeliveries(t *testing.T) {
	s := sim.New(t, sim.Head+"steps: [{id: charge, activity: p.charge}]\n", nil)
	first, _ := s.Take()
	s.Apply(history.Event{Type: history.ActivityAttemptInterrupted, Step: first.Step, ActivityExecutionID: first.ActivityExecutionID,
		Attempt: 1, Data: history.MustData(history.AttemptInterruption{Reason: "wend stopped"})})
	s.RunActivities(sim.Echo)
	doc := exportOf(t, s)
	a := doc.Activities[0]
	eq(t, "outcomes", outcomes(a), []string{"interrupted", "completed"})
	eq(t, "attempt ids", []string{a.Attempts[0].ActivityAttemptID, a.Attempts[1].ActivityAttemptID},
		[]string{"run1:steps[0]#1", "run1:steps[0]#2"})
	eq(t, "interruption", a.Attempts[0].Interruption, "wend stopped")
	if r := a.Attempts[0].Retry; r == nil || !r.Redelivery || r.NextAttempt != 2 {
		t.Fatalf("retry after the interrupted try: %+v", r)
	}
	eq(t, "failures", len(doc.Failures), 0)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"outcome":"interrupted"`, `"redelivery":true`, `"type":"ActivityAttemptInterrupted"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("export lacks %s", want)
		}
	}
	s.ReplayOK(t)
}
