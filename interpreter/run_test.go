package interpreter

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

const head = "wend: v1\nname: t\nplugins: {p: ./p}\n"

func TestSequenceSetAndOutput(t *testing.T) {
	s := newSim(t, head+`
steps:
  - id: a
    activity: p.echo
    with: {n: "${{ input.n + 1 }}"}
    set: {total: "${{ output.n }}"}
  - id: b
    activity: p.echo
    with: {prev: "${{ steps.a.output.n }}", total: "${{ state.total }}"}
output: {b: "${{ steps.b.output }}", state: "${{ state }}"}
`, map[string]any{"n": 1})
	s.runActivities(echo)
	want := map[string]any{"b": map[string]any{"prev": 2.0, "total": 2.0}, "state": map[string]any{"total": 2.0}}
	if got := s.output(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("output = %#v, want %#v", got, want)
	}
	// One decision batch per input: start -> schedule a; complete a -> schedule b; ...
	wantTypes := []history.EventType{history.WorkflowStarted, history.ActivityScheduled, history.ActivityCompleted,
		history.ActivityScheduled, history.ActivityCompleted, history.WorkflowCompleted}
	if got := types(s.events); !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("events = %v", got)
	}
	s.replayOK(t)
}

func TestParallelAndForEach(t *testing.T) {
	s := newSim(t, head+`
steps:
  - id: par
    parallel:
      - activity: p.echo
        with: 1
      - steps:
          - {activity: p.echo, with: 2}
          - {activity: p.echo, with: 3}
  - id: loop
    for_each: "${{ input.items }}"
    as: it
    concurrency: 2
    steps:
      - {id: first, activity: p.echo, with: "${{ it * 10 }}"}
      - {activity: p.echo, with: "${{ [index, steps.first.output] }}"}
output: {par: "${{ steps.par.output }}", loop: "${{ steps.loop.output }}"}
`, map[string]any{"items": []any{1, 2, 3}})
	// Both branches start together.
	if n := len(s.acts); n != 2 {
		t.Fatalf("parallel scheduled %d activities at once, want 2", n)
	}
	s.runActivities(echo)
	want := map[string]any{
		"par":  []any{1.0, 3.0},
		"loop": []any{[]any{0.0, 10.0}, []any{1.0, 20.0}, []any{2.0, 30.0}},
	}
	if got := s.output(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("output = %#v, want %#v", got, want)
	}
	s.replayOK(t)
}

func TestForEachConcurrencyLimit(t *testing.T) {
	s := newSim(t, head+`
steps:
  - for_each: "${{ input.items }}"
    concurrency: 3
    steps: [{activity: p.echo, with: "${{ item }}"}]
`, map[string]any{"items": []any{1, 2, 3, 4, 5, 6, 7}})
	if n := len(s.acts); n != 3 {
		t.Fatalf("%d items started, want 3", n)
	}
	s.runActivities(echo)
	if s.last().Type != history.WorkflowCompleted {
		t.Fatalf("last event %s", s.last().Type)
	}
	s.replayOK(t)
}

func TestRetriesAndBackoff(t *testing.T) {
	s := newSim(t, head+`
steps:
  - activity: p.flaky
    retry: {tries: 3, backoff: [5s, 30s]}
`, nil)
	var tries []time.Time
	s.runActivities(func(_ string, _ any, attempt int) (any, *history.Failure) {
		tries = append(tries, s.now)
		return nil, &history.Failure{Category: history.CategoryActivity, Type: "Boom", Message: "boom"}
	})
	// Tries at t, t+5s, t+35s; the workflow sees the error only after the third.
	want := []time.Time{t0, t0.Add(5 * time.Second), t0.Add(35 * time.Second)}
	if !reflect.DeepEqual(tries, want) {
		t.Fatalf("tries at %v, want %v", tries, want)
	}
	c := s.closed(t)
	if s.last().Type != history.WorkflowFailed || c.Failure.Attempt != 3 || c.Failure.Category != history.CategoryActivity {
		t.Fatalf("closed with %s %+v", s.last().Type, c.Failure)
	}
	got := types(s.events)
	wantTypes := []history.EventType{history.WorkflowStarted, history.ActivityScheduled,
		history.ActivityAttemptFailed, history.ActivityRetryScheduled,
		history.ActivityAttemptFailed, history.ActivityRetryScheduled,
		history.ActivityAttemptFailed, history.ActivityFailed, history.WorkflowFailed}
	if !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("events = %v", got)
	}
	rs, _ := history.DataOf[history.RetrySchedule](s.events[3])
	if rs.RetryAfterAttempt != 1 || rs.RetryBackoffSeconds != 5 || rs.RetryOfTaskID == "" || rs.RetryAfterAttemptID == "" {
		t.Fatalf("retry payload = %+v", rs)
	}
	s.replayOK(t)
}

func TestNonRetryableStopsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    history.Failure
	}{
		{"marked by the plugin", history.Failure{Type: "X", Message: "no", NonRetryable: true}},
		{"listed in the step", history.Failure{Type: "CardDeclined", Message: "declined"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, head+`
steps:
  - activity: p.charge
    retry: {tries: 5, backoff: [1s], non_retryable: [CardDeclined]}
`, nil)
			calls := 0
			s.runActivities(func(string, any, int) (any, *history.Failure) { calls++; f := tc.f; return nil, &f })
			c := s.closed(t)
			if calls != 1 || !c.Failure.NonRetryable {
				t.Fatalf("calls = %d, failure = %+v", calls, c.Failure)
			}
			s.replayOK(t)
		})
	}
}

func TestCatchLetsTheRunGoOn(t *testing.T) {
	s := newSim(t, head+`
steps:
  - id: charge
    activity: p.charge
    catch:
      - activity: p.page
        with: "${{ error.type + ': ' + error.message + ' #' + string(error.attempt) }}"
  - activity: p.echo
    with: "${{ steps.charge.output }}"
`, nil)
	s.runActivities(func(act string, in any, _ int) (any, *history.Failure) {
		if act == "charge" {
			return nil, &history.Failure{Type: "Declined", Message: "no funds"}
		}
		return in, nil
	})
	if got := s.output(t); got != nil {
		t.Fatalf("output = %v", got)
	}
	if got := s.results["steps[1]"]; got != "Declined: no funds #1" {
		t.Fatalf("the step after catch got %v, want the catch's output", got)
	}
	s.replayOK(t)
}

func TestDelayAndTimers(t *testing.T) {
	s := newSim(t, head+`
steps:
  - delay: 10m
  - delay: {until: "${{ input.at }}"}
  - activity: p.echo
`, map[string]any{"at": "2026-03-02T00:00:00Z"})
	if len(s.acts) != 0 || len(s.timers) != 1 {
		t.Fatalf("acts %d timers %d", len(s.acts), len(s.timers))
	}
	s.fireTimers(t0.Add(9 * time.Minute))
	if len(s.timers) != 1 {
		t.Fatal("a timer fired early")
	}
	s.fireTimers(t0.Add(24 * time.Hour))
	if len(s.acts) != 1 || !s.now.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("after both delays: acts %d now %v", len(s.acts), s.now)
	}
	s.runActivities(echo)
	s.replayOK(t)
}

func TestSignals(t *testing.T) {
	s := newSim(t, head+`
steps:
  - wait_for_signal: approve
    set: {by: "${{ signal.by }}"}
  - id: second
    wait_for_signal: approve
    timeout: 1h
output: {first: "${{ state.by }}", second: "${{ steps.second.output.by }}"}
`, nil)
	// Two signals sent before and during the waits are consumed in order.
	s.signal("approve", map[string]any{"by": "ann"})
	s.signal("approve", map[string]any{"by": "bob"})
	want := map[string]any{"first": "ann", "second": "bob"}
	if got := s.output(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("output = %v", got)
	}
	s.replayOK(t)
}

func TestSignalTimeoutFailsTheStep(t *testing.T) {
	s := newSim(t, head+`
steps:
  - wait_for_signal: approve
    timeout: 1h
`, nil)
	s.fireTimers(t0.Add(2 * time.Hour))
	c := s.closed(t)
	if c.Failure == nil || c.Failure.Category != history.CategoryTimeout {
		t.Fatalf("closed %s %+v", s.last().Type, c.Failure)
	}
	// A signal after the timeout changes nothing.
	if _, err := s.r.Apply(history.Event{Type: history.SignalReceived, Seq: 99}); !errors.Is(err, ErrClosed) {
		t.Fatalf("signal to closed run: %v", err)
	}
	s.replayOK(t)
}

func TestParallelFailureCancelsSiblings(t *testing.T) {
	s := newSim(t, head+`
steps:
  - parallel:
      - activity: p.bad
      - delay: 1h
      - activity: p.slow
`, nil)
	if len(s.acts) != 2 || len(s.timers) != 1 {
		t.Fatalf("acts %d timers %d", len(s.acts), len(s.timers))
	}
	bad := s.acts[0]
	s.acts = s.acts[1:]
	s.apply(history.Event{Type: history.ActivityAttemptFailed, ActivityExecutionID: bad.ActivityExecutionID, Attempt: 1,
		Data: history.MustData(history.AttemptFailure{Failure: history.Failure{Message: "x"}})})
	got := types(s.events[len(s.events)-4:])
	want := []history.EventType{history.ActivityFailed, history.TimerCancelled, history.ActivityCancelled, history.WorkflowFailed}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tail = %v, want %v", got, want)
	}
	s.replayOK(t)
}

func TestStaleCompletionIgnored(t *testing.T) {
	s := newSim(t, head+`
steps:
  - activity: p.x
    retry: {tries: 2}
`, nil)
	a := s.acts[0]
	s.apply(history.Event{Type: history.ActivityAttemptFailed, ActivityExecutionID: a.ActivityExecutionID, Attempt: 1,
		Data: history.MustData(history.AttemptFailure{Failure: history.Failure{Message: "timeout"}})})
	if s.r.Expects(a.ActivityExecutionID, 1) || !s.r.Expects(a.ActivityExecutionID, 2) {
		t.Fatal("Expects does not follow the attempt")
	}
	out, err := s.r.Apply(history.Event{Type: history.ActivityCompleted, Seq: 99, ActivityExecutionID: a.ActivityExecutionID, Attempt: 1,
		Data: history.MustData(history.ActivityResult{Output: []byte(`1`)})})
	if err != nil || len(out) != 0 {
		t.Fatalf("late completion of attempt 1 applied: %v %v", out, err)
	}
}

func TestIfSkipsAndFailStep(t *testing.T) {
	s := newSim(t, head+`
steps:
  - if: "${{ input.skip }}"
    activity: p.never
  - fail: {message: "stop ${{ input.why }}", type: Stopped, non_retryable: true}
`, map[string]any{"skip": false, "why": "now"})
	c := s.closed(t)
	if len(s.acts) != 0 || c.Failure.Message != "stop now" || c.Failure.Type != "Stopped" || !c.Failure.NonRetryable {
		t.Fatalf("failure = %+v", c.Failure)
	}
	s.replayOK(t)
}

func TestExpressionErrorFailsStep(t *testing.T) {
	s := newSim(t, head+`
steps:
  - activity: p.x
    with: "${{ input.a.b.c }}"
`, map[string]any{})
	c := s.closed(t)
	if c.Failure.Category != history.CategoryExpression || !strings.Contains(c.Failure.Message, "with:") {
		t.Fatalf("failure = %+v", c.Failure)
	}
}

func TestChildAndContinueAsNew(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("child.wend.yaml", []byte("wend: v1\nname: c\nsteps: [{delay: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSim(t, head+`
steps:
  - id: child
    run_workflow: ./child.wend.yaml
    with: {x: 1}
  - continue_as_new: true
    with: {prev: "${{ steps.child.output }}"}
`, nil)
	ev := s.last()
	cs, _ := history.DataOf[history.ChildSchedule](ev)
	if ev.Type != history.ChildWorkflowScheduled || cs.WorkflowID != "wf/steps[0]" || cs.SpecFile != "child.wend.yaml" {
		t.Fatalf("child schedule %s %+v", ev.Type, cs)
	}
	s.apply(history.Event{Type: history.ChildWorkflowCompleted, Step: ev.Step, Data: history.MustData(history.Closed{Output: []byte(`"ok"`), RunID: "c1"})})
	if s.last().Type != history.WorkflowContinuedAsNew || string(s.closed(t).Input) != `{"prev":"ok"}` {
		t.Fatalf("last %s %s", s.last().Type, s.closed(t).Input)
	}
	s.replayOK(t)
}

func TestReplayDetectsChangedSpec(t *testing.T) {
	s := newSim(t, head+"steps:\n  - activity: p.a\n  - activity: p.b\n", nil)
	s.runActivities(echo)
	changed := load(t, head+"steps:\n  - activity: p.a\n  - activity: p.c\n")
	st, _ := history.DataOf[history.Started](s.events[0])
	err := New(changed, st).Replay(s.events)
	if !errors.Is(err, ErrNondeterministic) {
		t.Fatalf("replay with a changed spec: %v", err)
	}
}

func TestCancel(t *testing.T) {
	s := newSim(t, head+"steps:\n  - parallel: [{activity: p.a}, {delay: 1h}]\n", nil)
	s.apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: "ops"})})
	got := types(s.events[len(s.events)-3:])
	want := []history.EventType{history.ActivityCancelled, history.TimerCancelled, history.WorkflowCancelled}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tail = %v", got)
	}
	s.replayOK(t)
}
