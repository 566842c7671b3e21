package sim

import (
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// TB is what a Sim needs of a test: a *testing.T or *testing.B.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// T0 is when every Sim's run starts.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Head starts the specs of the tests: a workflow t with one plugin, p.
const Head = "wend: v1\nname: t\nplugins: {p: ./p}\n"

// Sim is a Host a test steps by hand: it answers the owed tries and fires the timers when the
// test says, and fails the test on anything the interpreter refuses.
type Sim struct {
	*Host
	t      TB
	Inputs map[string]any // step path -> the input its activity was last called with
}

// Load parses src as test.wend.yaml; t fails on any spec error.
func Load(t TB, src string) *spec.Workflow {
	t.Helper()
	w, ds := spec.Load("test.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatalf("spec: %s", ds.Error())
	}
	return w
}

// New starts run run1 of workflow wf from src with input at T0, as the engine would record it.
func New(t TB, src string, input any) *Sim {
	t.Helper()
	return Start(t, Started("wf", "run1", "test.wend.yaml", []byte(src), input, T0))
}

// Start starts a run recorded as st (its spec is st.SpecSource) at T0: a child run, such as a
// shard child, whose Started a test builds from its parent's ChildWorkflowScheduled.
func Start(t TB, st history.Started) *Sim {
	t.Helper()
	s := &Sim{Host: NewHost(Load(t, st.SpecSource), st, T0), t: t, Inputs: map[string]any{}}
	if _, err := s.Begin(); err != nil {
		t.Fatalf("apply %s: %v", history.WorkflowStarted, err)
	}
	return s
}

// Apply records an input at the current time, then the decisions it yields, and returns them.
func (s *Sim) Apply(ev history.Event) []history.Event {
	s.t.Helper()
	out, err := s.Host.Apply(ev)
	if err != nil {
		s.t.Fatalf("apply %s: %v", ev.Type, err)
	}
	return out
}

// Answer is how a test plays the plugins: an output, or a failure. A failure of category
// timeout is recorded as ActivityTimedOut, as the engine does when a try's timeout expires.
type Answer func(activity string, input any, attempt int) (any, *history.Failure)

// Echo answers every activity with its input.
func Echo(_ string, in any, _ int) (any, *history.Failure) { return in, nil }

// Step answers the oldest owed try; a retry first waits for its available_at, as the engine's
// tasks do.
func (s *Sim) Step(fn Answer) {
	s.t.Helper()
	d, ok := s.Take()
	if !ok {
		s.t.Fatalf("step: no activity is owed")
	}
	tr := s.TryOf(d)
	if tr.At.After(s.Now) {
		s.Now = tr.At
	}
	s.Inputs[tr.Step] = tr.Input
	out, f := fn(tr.Schedule.Activity, tr.Input, tr.Attempt)
	s.Apply(Result(tr, out, f))
}

// RunActivities answers owed tries, oldest first, until none is owed.
func (s *Sim) RunActivities(fn Answer) {
	s.t.Helper()
	for guard := 0; len(s.Tries()) > 0; guard++ {
		if guard > 10000 {
			s.t.Fatalf("activities never settle")
		}
		s.Step(fn)
	}
}

// FireTimers advances the clock to each timer due by until, earliest first (then by id), and
// fires it.
func (s *Sim) FireTimers(until time.Time) {
	s.t.Helper()
	for {
		id, at := "", time.Time{}
		for k, v := range s.Timers() {
			if !v.After(until) && (id == "" || v.Before(at) || (v.Equal(at) && k < id)) {
				id, at = k, v
			}
		}
		if id == "" {
			return
		}
		if at.After(s.Now) {
			s.Now = at
		}
		if _, err := s.Fire(id); err != nil {
			s.t.Fatalf("apply %s: %v", history.TimerFired, err)
		}
	}
}

// Signal delivers signal name with data.
func (s *Sim) Signal(name string, data any) {
	s.t.Helper()
	s.Apply(history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: name, Data: history.MustData(data)})})
}

// Cancel requests the run's cancellation.
func (s *Sim) Cancel(reason string) {
	s.t.Helper()
	s.Apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: reason})})
}

// Closed is the payload of the terminal event; t fails if the run is still open.
func (s *Sim) Closed(t TB) history.Closed {
	t.Helper()
	c, ok := s.Closing()
	if !ok {
		t.Fatalf("run not closed; last event %s", s.Last().Type)
	}
	return c
}

// Output is the workflow's output, decoded; t fails unless the run completed.
func (s *Sim) Output(t TB) any {
	t.Helper()
	if s.Last().Type != history.WorkflowCompleted {
		c := s.Closed(t)
		t.Fatalf("run ended with %s: %+v", s.Last().Type, c.Failure)
	}
	return s.Host.Output()
}

// ReplayOK checks docs/reliability.md G4: a fresh Run fed the recorded history decides exactly
// the same, and the history passes history.Check.
func (s *Sim) ReplayOK(t TB) {
	t.Helper()
	st, _ := history.DataOf[history.Started](s.Events[0])
	if err := interpreter.New(s.W, st).Replay(s.Events); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if ps := history.Check(s.record(), s.Events); len(ps) > 0 {
		t.Fatalf("history check: %v", ps)
	}
}

// Record is the run record the engine would hold for the history so far; the sim's t fails
// if the history does not pass history.Check.
func (s *Sim) Record() history.Run {
	s.t.Helper()
	r := s.record()
	if ps := history.Check(r, s.Events); len(ps) > 0 {
		s.t.Fatalf("the sim wrote a bad history: %v", ps)
	}
	return r
}

func (s *Sim) record() history.Run {
	last := s.Last()
	st, _ := history.DataOf[history.Started](s.Events[0])
	r := history.Run{WorkflowID: st.WorkflowID, RunID: st.RunID, Name: s.W.Name, Status: history.StatusRunning,
		SpecFile: st.SpecFile, StartedAt: s.Start, LastSeq: last.Seq, ParentRunID: st.ParentRunID}
	if last.Type.Terminal() {
		r.ClosedAt = last.Time
		r.Status, r.ClosedReason = history.ClosedBy(last)
	}
	return r
}
