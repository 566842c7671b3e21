package sim_test

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
)

// host starts a Host of src at sim.T0, failing t on a refused start.
func host(t *testing.T, src string) *sim.Host {
	t.Helper()
	w := sim.Load(t, src)
	h := sim.NewHost(w, sim.Started("wf", "run1", w.File, w.Source, nil, sim.T0), sim.T0)
	if _, err := h.Begin(); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestStartedPinsTheSource: the Started a host records carries the source and its sha256, as
// the engine's does, so the history passes history.Check.
func TestStartedPinsTheSource(t *testing.T) {
	st := sim.Started("wf", "run1", "a.wend.yaml", []byte("abc"), map[string]any{"k": 1}, sim.T0)
	if st.SpecSHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || st.SpecSource != "abc" ||
		string(st.Input) != `{"k":1}` || st.Rules != history.RulesCurrent || !st.ExecutionStarted.Equal(sim.T0) {
		t.Fatalf("started = %+v", st)
	}
	s := sim.New(t, sim.Head+"steps: [{activity: p.x}]\n", nil)
	s.RunActivities(sim.Echo)
	s.Record() // fails the test on a history.Check problem
}

// TestAgendaOrder: Next gives what is owed earliest first, ties in the order queued: a first try
// at once, then a timer and a signal at the same minute in the order they were queued.
func TestAgendaOrder(t *testing.T) {
	h := host(t, sim.Head+"steps:\n  - parallel:\n      - delay: 1m\n      - activity: p.x\n")
	h.Due(sim.T0.Add(time.Minute), history.Event{Type: history.SignalReceived,
		Data: history.MustData(history.Signal{Name: "s", Data: history.MustData(nil)})})
	var got []history.EventType
	var at []time.Duration
	for {
		ev, ok := h.Next()
		if !ok {
			break
		}
		got, at = append(got, ev.Type), append(at, h.Now.Sub(sim.T0))
	}
	want := []history.EventType{history.ActivityScheduled, history.TimerFired, history.SignalReceived}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] ||
		at[0] != 0 || at[1] != time.Minute || at[2] != time.Minute {
		t.Fatalf("agenda gave %v at %v, want %v at [0 1m 1m]", got, at, want)
	}
}

// TestOutcomeReplacesItsTry: an outcome queued for a try takes the try's place on the agenda,
// and a cancelled timer is withdrawn from it.
func TestOutcomeReplacesItsTry(t *testing.T) {
	h := host(t, sim.Head+"output: \"${{ steps.a.output }}\"\nsteps:\n  - {id: a, activity: p.x}\n")
	tries := h.Tries()
	if len(tries) != 1 {
		t.Fatalf("tries %d, want 1", len(tries))
	}
	tr := h.TryOf(tries[0])
	if tr.Attempt != 1 || tr.Schedule.Activity != "x" || !tr.At.Equal(sim.T0) {
		t.Fatalf("try = %+v", tr)
	}
	h.Due(sim.T0.Add(time.Second), sim.Result(tr, "out", nil))
	if n := len(h.Tries()); n != 0 {
		t.Fatalf("the try is still owed after its outcome was queued: %d", n)
	}
	ev, ok := h.Next()
	if !ok || ev.Type != history.ActivityCompleted || !h.Now.Equal(sim.T0.Add(time.Second)) {
		t.Fatalf("next = %s %v at %v", ev.Type, ok, h.Now)
	}
	if ok, err := h.Deliver(ev); !ok || err != nil || h.Output() != "out" {
		t.Fatalf("deliver = %v %v, output %v", ok, err, h.Output())
	}
}

// TestResultKinds: an answer becomes the input the engine records for it.
func TestResultKinds(t *testing.T) {
	tr := sim.Try{Step: "steps[0]", ExecID: "e", Attempt: 2}
	for _, c := range []struct {
		name string
		f    *history.Failure
		want history.EventType
	}{
		{"output", nil, history.ActivityCompleted},
		{"timeout", &history.Failure{Category: history.CategoryTimeout, Message: "late"}, history.ActivityTimedOut},
		{"failure", &history.Failure{Category: history.CategoryActivity, Message: "no"}, history.ActivityAttemptFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := sim.Result(tr, 1, c.f)
			if ev.Type != c.want || ev.Step != tr.Step || ev.ActivityExecutionID != "e" || ev.Attempt != 2 {
				t.Fatalf("result = %+v, want %s", ev, c.want)
			}
		})
	}
}

// TestSupersededOutcomeDropped: an outcome for a try the run no longer expects is dropped
// before it is recorded, as the engine drops it.
func TestSupersededOutcomeDropped(t *testing.T) {
	h := host(t, sim.Head+"steps:\n  - activity: p.x\n    retry: {tries: 2}\n")
	d, _ := h.Take()
	tr := h.TryOf(d)
	if _, err := h.Apply(sim.Result(tr, nil, &history.Failure{Category: history.CategoryActivity, Message: "no"})); err != nil {
		t.Fatal(err)
	}
	n := len(h.Events)
	ok, err := h.Deliver(sim.Result(tr, "late", nil))
	if ok || err != nil || len(h.Events) != n {
		t.Fatalf("a superseded outcome was recorded: %v %v, %d events, want %d", ok, err, len(h.Events), n)
	}
	retry := h.Tries()
	if len(retry) != 1 || retry[0].Type != history.ActivityRetryScheduled || h.TryOf(retry[0]).Attempt != 2 {
		t.Fatalf("owed after the failure: %+v", retry)
	}
}

// TestTimerCancelledWithdrawn: a timer the run cancels is no longer armed.
func TestTimerCancelledWithdrawn(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - wait_for_signal: go\n    timeout: 1h\n", nil)
	if n := len(s.Timers()); n != 1 {
		t.Fatalf("timers %d, want 1", n)
	}
	s.Signal("go", nil)
	if n := len(s.Timers()); n != 0 || s.Last().Type != history.WorkflowCompleted {
		t.Fatalf("timers %d after the signal, last %s", n, s.Last().Type)
	}
	if _, ok := s.Next(); ok {
		t.Fatal("the agenda still holds the cancelled timer")
	}
}
