package interpreter_test

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

func TestSequenceSetAndOutput(t *testing.T) {
	s := sim.New(t, sim.Head+`
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
	s.RunActivities(sim.Echo)
	want := map[string]any{"b": map[string]any{"prev": 2.0, "total": 2.0}, "state": map[string]any{"total": 2.0}}
	if got := s.Output(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("output = %#v, want %#v", got, want)
	}
	// One decision batch per input: start -> schedule a; complete a -> schedule b; ...
	wantTypes := []history.EventType{history.WorkflowStarted, history.ActivityScheduled, history.ActivityCompleted,
		history.ActivityScheduled, history.ActivityCompleted, history.WorkflowCompleted}
	if got := types(s.Events); !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("events = %v", got)
	}
	s.ReplayOK(t)
}

// TestChildIDRules pins how a child's workflow id is made under each rule set: a
// history recorded before child ids derived from the run (Rules 0) must still replay with
// the id it recorded, and a `wend retry` run (ExecBase set) names its children as the run it
// retries did, as it does its activity execution ids.
func TestChildIDRules(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("child.wend.yaml", []byte("wend: v1\nname: c\nsteps: [{delay: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := sim.Load(t, sim.Head+"steps: [{id: k, run_workflow: ./child.wend.yaml}]\n")
	for _, tc := range []struct {
		name string
		st   history.Started
		want string
	}{
		{"legacy history", history.Started{WorkflowID: "wf", RunID: "run1"}, "wf/steps[0]"},
		{"current rules", history.Started{WorkflowID: "wf", RunID: "run1", Rules: history.RulesCurrent}, "wf/run1/steps[0]"},
		{"retry of run0", history.Started{WorkflowID: "wf", RunID: "run2", ExecBase: "run0", RetryOf: "run0", Rules: history.RulesCurrent}, "wf/run0/steps[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.st.Input, tc.st.ExecutionStarted = []byte("null"), sim.T0
			evs, err := interpreter.New(w, tc.st).Apply(history.Event{Seq: 1, Type: history.WorkflowStarted, Time: sim.T0, Data: history.MustData(tc.st)})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || evs[0].Type != history.ChildWorkflowScheduled {
				t.Fatalf("decisions %+v", evs)
			}
			if cs, _ := history.DataOf[history.ChildSchedule](evs[0]); cs.WorkflowID != tc.want {
				t.Fatalf("child id %q, want %q", cs.WorkflowID, tc.want)
			}
		})
	}
}

func TestParallelAndForEach(t *testing.T) {
	s := sim.New(t, sim.Head+`
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
	if n := len(s.Tries()); n != 2 {
		t.Fatalf("parallel scheduled %d activities at once, want 2", n)
	}
	s.RunActivities(sim.Echo)
	want := map[string]any{
		"par":  []any{1.0, 3.0},
		"loop": []any{[]any{0.0, 10.0}, []any{1.0, 20.0}, []any{2.0, 30.0}},
	}
	if got := s.Output(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("output = %#v, want %#v", got, want)
	}
	s.ReplayOK(t)
}

func TestForEachConcurrencyLimit(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - for_each: "${{ input.items }}"
    concurrency: 3
    steps: [{activity: p.echo, with: "${{ item }}"}]
`, map[string]any{"items": []any{1, 2, 3, 4, 5, 6, 7}})
	if n := len(s.Tries()); n != 3 {
		t.Fatalf("%d items started, want 3", n)
	}
	s.RunActivities(sim.Echo)
	if s.Last().Type != history.WorkflowCompleted {
		t.Fatalf("last event %s", s.Last().Type)
	}
	s.ReplayOK(t)
}

func TestRetriesAndBackoff(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - activity: p.flaky
    retry: {tries: 3, backoff: [5s, 30s]}
`, nil)
	var tries []time.Time
	s.RunActivities(func(_ string, _ any, attempt int) (any, *history.Failure) {
		tries = append(tries, s.Now)
		return nil, &history.Failure{Category: history.CategoryActivity, Type: "Boom", Message: "boom"}
	})
	// Tries at t, t+5s, t+35s; the workflow sees the error only after the third.
	want := []time.Time{sim.T0, sim.T0.Add(5 * time.Second), sim.T0.Add(35 * time.Second)}
	if !reflect.DeepEqual(tries, want) {
		t.Fatalf("tries at %v, want %v", tries, want)
	}
	c := s.Closed(t)
	if s.Last().Type != history.WorkflowFailed || c.Failure.Attempt != 3 || c.Failure.Category != history.CategoryActivity {
		t.Fatalf("closed with %s %+v", s.Last().Type, c.Failure)
	}
	got := types(s.Events)
	wantTypes := []history.EventType{history.WorkflowStarted, history.ActivityScheduled,
		history.ActivityAttemptFailed, history.ActivityRetryScheduled,
		history.ActivityAttemptFailed, history.ActivityRetryScheduled,
		history.ActivityAttemptFailed, history.ActivityFailed, history.WorkflowFailed}
	if !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("events = %v", got)
	}
	rs, _ := history.DataOf[history.RetrySchedule](s.Events[3])
	if rs.RetryAfterAttempt != 1 || rs.RetryBackoffSeconds != 5 || rs.RetryOfTaskID == "" || rs.RetryAfterAttemptID == "" {
		t.Fatalf("retry payload = %+v", rs)
	}
	s.ReplayOK(t)
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
			s := sim.New(t, sim.Head+`
steps:
  - activity: p.charge
    retry: {tries: 5, backoff: [1s], non_retryable: [CardDeclined]}
`, nil)
			calls := 0
			s.RunActivities(func(string, any, int) (any, *history.Failure) { calls++; f := tc.f; return nil, &f })
			c := s.Closed(t)
			if calls != 1 || !c.Failure.NonRetryable {
				t.Fatalf("calls = %d, failure = %+v", calls, c.Failure)
			}
			s.ReplayOK(t)
		})
	}
}

func TestCatchLetsTheRunGoOn(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: charge
    activity: p.charge
    catch:
      - activity: p.page
        with: "${{ error.type + ': ' + error.message + ' #' + string(error.attempt) }}"
  - activity: p.echo
    with: "${{ steps.charge.output }}"
`, nil)
	s.RunActivities(func(act string, in any, _ int) (any, *history.Failure) {
		if act == "charge" {
			return nil, &history.Failure{Type: "Declined", Message: "no funds"}
		}
		return in, nil
	})
	if got := s.Output(t); got != nil {
		t.Fatalf("output = %v", got)
	}
	if got := s.Inputs["steps[1]"]; got != "Declined: no funds #1" {
		t.Fatalf("the step after catch got %v, want the catch's output", got)
	}
	s.ReplayOK(t)
}

func TestDelayAndTimers(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - delay: 10m
  - delay: {until: "${{ input.at }}"}
  - activity: p.echo
`, map[string]any{"at": "2026-03-02T00:00:00Z"})
	if len(s.Tries()) != 0 || len(s.Timers()) != 1 {
		t.Fatalf("acts %d timers %d", len(s.Tries()), len(s.Timers()))
	}
	s.FireTimers(sim.T0.Add(9 * time.Minute))
	if len(s.Timers()) != 1 {
		t.Fatal("a timer fired early")
	}
	s.FireTimers(sim.T0.Add(24 * time.Hour))
	if len(s.Tries()) != 1 || !s.Now.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("after both delays: acts %d now %v", len(s.Tries()), s.Now)
	}
	s.RunActivities(sim.Echo)
	s.ReplayOK(t)
}

func TestSignals(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - wait_for_signal: approve
    set: {by: "${{ signal.by }}"}
  - id: second
    wait_for_signal: approve
    timeout: 1h
output: {first: "${{ state.by }}", second: "${{ steps.second.output.by }}"}
`, nil)
	// Two signals sent before and during the waits are consumed in order.
	s.Signal("approve", map[string]any{"by": "ann"})
	s.Signal("approve", map[string]any{"by": "bob"})
	want := map[string]any{"first": "ann", "second": "bob"}
	if got := s.Output(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("output = %v", got)
	}
	s.ReplayOK(t)
}

func TestSignalTimeoutFailsTheStep(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - wait_for_signal: approve
    timeout: 1h
`, nil)
	s.FireTimers(sim.T0.Add(2 * time.Hour))
	c := s.Closed(t)
	if c.Failure == nil || c.Failure.Category != history.CategoryTimeout {
		t.Fatalf("closed %s %+v", s.Last().Type, c.Failure)
	}
	// A signal after the timeout changes nothing.
	if _, err := s.R.Apply(history.Event{Type: history.SignalReceived, Seq: 99}); !errors.Is(err, interpreter.ErrClosed) {
		t.Fatalf("signal to closed run: %v", err)
	}
	s.ReplayOK(t)
}

func TestParallelFailureCancelsSiblings(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - parallel:
      - activity: p.bad
      - delay: 1h
      - activity: p.slow
`, nil)
	if len(s.Tries()) != 2 || len(s.Timers()) != 1 {
		t.Fatalf("acts %d timers %d", len(s.Tries()), len(s.Timers()))
	}
	bad, _ := s.Take()
	s.Apply(history.Event{Type: history.ActivityAttemptFailed, ActivityExecutionID: bad.ActivityExecutionID, Attempt: 1,
		Data: history.MustData(history.AttemptFailure{Failure: history.Failure{Message: "x"}})})
	got := types(s.Events[len(s.Events)-4:])
	want := []history.EventType{history.ActivityFailed, history.TimerCancelled, history.ActivityCancelled, history.WorkflowFailed}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tail = %v, want %v", got, want)
	}
	s.ReplayOK(t)
}

func TestStaleCompletionIgnored(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - activity: p.x
    retry: {tries: 2}
`, nil)
	a := s.Tries()[0]
	s.Apply(history.Event{Type: history.ActivityAttemptFailed, ActivityExecutionID: a.ActivityExecutionID, Attempt: 1,
		Data: history.MustData(history.AttemptFailure{Failure: history.Failure{Message: "timeout"}})})
	if s.R.Expects(a.ActivityExecutionID, 1) || !s.R.Expects(a.ActivityExecutionID, 2) {
		t.Fatal("Expects does not follow the attempt")
	}
	out, err := s.R.Apply(history.Event{Type: history.ActivityCompleted, Seq: 99, ActivityExecutionID: a.ActivityExecutionID, Attempt: 1,
		Data: history.MustData(history.ActivityResult{Output: []byte(`1`)})})
	if err != nil || len(out) != 0 {
		t.Fatalf("late completion of attempt 1 applied: %v %v", out, err)
	}
}

func TestIfSkipsAndFailStep(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - if: "${{ input.skip }}"
    activity: p.never
  - fail: {message: "stop ${{ input.why }}", type: Stopped, non_retryable: true}
`, map[string]any{"skip": false, "why": "now"})
	c := s.Closed(t)
	if len(s.Tries()) != 0 || c.Failure.Message != "stop now" || c.Failure.Type != "Stopped" || !c.Failure.NonRetryable {
		t.Fatalf("failure = %+v", c.Failure)
	}
	s.ReplayOK(t)
}

func TestExpressionErrorFailsStep(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - activity: p.x
    with: "${{ input.a.b.c }}"
`, map[string]any{})
	c := s.Closed(t)
	if c.Failure.Category != history.CategoryExpression || !strings.Contains(c.Failure.Message, "with:") {
		t.Fatalf("failure = %+v", c.Failure)
	}
}

func TestChildAndContinueAsNew(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("child.wend.yaml", []byte("wend: v1\nname: c\nsteps: [{delay: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := sim.New(t, sim.Head+`
steps:
  - id: child
    run_workflow: ./child.wend.yaml
    with: {x: 1}
  - continue_as_new: true
    with: {prev: "${{ steps.child.output }}"}
`, nil)
	ev := s.Last()
	cs, _ := history.DataOf[history.ChildSchedule](ev)
	if ev.Type != history.ChildWorkflowScheduled || cs.WorkflowID != "wf/run1/steps[0]" || cs.SpecFile != "child.wend.yaml" {
		t.Fatalf("child schedule %s %+v", ev.Type, cs)
	}
	s.Apply(history.Event{Type: history.ChildWorkflowCompleted, Step: ev.Step, Data: history.MustData(history.Closed{Output: []byte(`"ok"`), RunID: "c1"})})
	if s.Last().Type != history.WorkflowContinuedAsNew || string(s.Closed(t).Input) != `{"prev":"ok"}` {
		t.Fatalf("last %s %s", s.Last().Type, s.Closed(t).Input)
	}
	s.ReplayOK(t)
}

func TestReplayDetectsChangedSpec(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - activity: p.a\n  - activity: p.b\n", nil)
	s.RunActivities(sim.Echo)
	changed := sim.Load(t, sim.Head+"steps:\n  - activity: p.a\n  - activity: p.c\n")
	st, _ := history.DataOf[history.Started](s.Events[0])
	err := interpreter.New(changed, st).Replay(s.Events)
	if !errors.Is(err, interpreter.ErrNondeterministic) {
		t.Fatalf("replay with a changed spec: %v", err)
	}
}

func TestCancel(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - parallel: [{activity: p.a}, {delay: 1h}]\n", nil)
	s.Apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: "ops"})})
	got := types(s.Events[len(s.Events)-3:])
	want := []history.EventType{history.ActivityCancelled, history.TimerCancelled, history.WorkflowCancelled}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tail = %v", got)
	}
	s.ReplayOK(t)
}

func types(evs []history.Event) []history.EventType {
	out := make([]history.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// TestBackoffMaxBoundsJitter: backoff {initial, max, jitter} waited 135ms with max
// 100ms, because jitter was added after the cap. The wait must stay within [d(1-j), max]
// whatever the draw, keep spreading at the cap, and equal the old formula below it.
func TestBackoffMaxBoundsJitter(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		d, limit time.Duration
		j, u     float64
		want     time.Duration
	}{
		{"at the cap, top draw", 100 * ms, 100 * ms, 0.5, 0.999999, 99_999_975},
		{"at the cap, middle draw", 100 * ms, 100 * ms, 0.5, 0, 75 * ms},
		{"at the cap, bottom draw", 100 * ms, 100 * ms, 0.5, -1, 50 * ms},
		{"near the cap, top draw cut", 80 * ms, 100 * ms, 0.5, 0.999999, 99_999_970},
		{"below the cap: the old formula", 40 * ms, 100 * ms, 0.5, 0.5, 50 * ms},
		{"below the cap, bottom", 40 * ms, 100 * ms, 0.5, -1, 20 * ms},
		{"no max", 100 * ms, 0, 0.5, 0.999999, 149_999_950},
		{"full jitter at the cap", 100 * ms, 100 * ms, 1, -1, 0},
		{"full jitter at the cap, top", 100 * ms, 100 * ms, 1, 0.999999, 99_999_950},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := interpreter.Jittered(tc.d, tc.limit, tc.j, tc.u)
			if got != tc.want {
				t.Errorf("jittered(%v, max %v, jitter %v, u %v) = %v, want %v", tc.d, tc.limit, tc.j, tc.u, got, tc.want)
			}
		})
	}
	// Every draw over a range of attempts: the wait never passes max. The workflow runs as
	// the report did (initial 10ms, factor 2, max 100ms, jitter 0.5).
	s := sim.New(t, sim.Head+`
steps:
  - {activity: p.busy, retry: {tries: 40, backoff: {initial: 10ms, factor: 2, max: 100ms, jitter: 0.5}}}
`, nil)
	var waits []time.Duration
	for range 39 {
		s.Step(func(string, any, int) (any, *history.Failure) {
			return nil, &history.Failure{Type: "Busy", Message: "busy"}
		})
		rs, err := history.DataOf[history.RetrySchedule](s.Last())
		if err != nil || s.Last().Type != history.ActivityRetryScheduled {
			t.Fatalf("last event %s: %v", s.Last().Type, err)
		}
		waits = append(waits, rs.AvailableAt.Sub(s.Now))
		s.Now = rs.AvailableAt
	}
	atCap := map[time.Duration]bool{}
	for i, w := range waits {
		if w > 100*ms || w < 5*ms {
			t.Errorf("wait after try %d is %v, outside [5ms, 100ms]", i+1, w)
		}
		if i >= 4 {
			atCap[w] = true
		}
	}
	if len(atCap) < 10 {
		t.Errorf("waits at the cap take %d distinct values over 35 tries; jitter should spread them", len(atCap))
	}
	s.ReplayOK(t)
}

// TestRedeliveryNotCountedAgainstTries: an interrupted try is redelivered as the
// next attempt, and the step still gets all its tries: with tries: 2, one interruption and two
// failures make attempts 1 (interrupted), 2 and 3 (failed), then ActivityFailed at attempt 3.
// An interruption report for an attempt already superseded changes nothing.
func TestRedeliveryNotCountedAgainstTries(t *testing.T) {
	s := sim.New(t, sim.Head+"steps: [{id: a, activity: p.flaky, retry: {tries: 2}}]\n", nil)
	first, _ := s.Take()
	interrupt := func(attempt int) []history.Event {
		return s.Apply(history.Event{Type: history.ActivityAttemptInterrupted, Step: first.Step,
			ActivityExecutionID: first.ActivityExecutionID, Attempt: attempt,
			Data: history.MustData(history.AttemptInterruption{Reason: "test"})})
	}
	out := interrupt(1)
	if len(out) != 1 || out[0].Type != history.ActivityRetryScheduled {
		t.Fatalf("after the interruption: %+v", out)
	}
	if rs, _ := history.DataOf[history.RetrySchedule](out[0]); !rs.Redelivery || rs.NextAttempt != 2 || !rs.AvailableAt.Equal(s.Now) {
		t.Fatalf("redelivery %+v", rs)
	}
	if out := interrupt(1); len(out) != 0 {
		t.Fatalf("a second report for attempt 1 decided %+v", out)
	}
	busy := func(string, any, int) (any, *history.Failure) {
		return nil, &history.Failure{Type: "Busy", Message: "busy"}
	}
	s.RunActivities(busy)
	c := s.Closed(t)
	if s.Last().Type != history.WorkflowFailed || c.Failure == nil || c.Failure.Attempt != 3 {
		t.Fatalf("run ended %s %+v; want failed at attempt 3", s.Last().Type, c.Failure)
	}
	s.ReplayOK(t)
}
