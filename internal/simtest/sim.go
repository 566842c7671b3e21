package simtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// T0 is when every simulated run starts.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Head starts the specs of the tests: a workflow t with one plugin, p.
const Head = "wend: v1\nname: t\nplugins: {p: ./p}\n"

// Sim is one run of the interpreter with its history so far. Tests may read and set its
// fields between calls (advance Now, take an owed activity off Acts).
type Sim struct {
	t      testing.TB
	W      *spec.Workflow
	R      *interpreter.Run
	Events []history.Event
	Now    time.Time
	Acts   []history.Event      // ActivityScheduled / ActivityRetryScheduled still owed, oldest first
	Timers map[string]time.Time // timer id -> fire_at, for the timers still armed
	Inputs map[string]any       // step path -> the input its activity was last called with
}

// Load parses src as test.wend.yaml; t fails on any spec error.
func Load(t testing.TB, src string) *spec.Workflow {
	t.Helper()
	w, ds := spec.Load("test.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatalf("spec: %s", ds.Error())
	}
	return w
}

// New starts run run1 of workflow wf from src with input at T0, as the engine would record it.
func New(t testing.TB, src string, input any) *Sim {
	t.Helper()
	sum := sha256.Sum256([]byte(src))
	st := history.Started{WorkflowID: "wf", RunID: "run1", Input: history.MustData(input), SpecFile: "test.wend.yaml",
		SpecSource: src, SpecSHA256: hex.EncodeToString(sum[:]), ExecutionStarted: T0, Rules: history.RulesCurrent}
	return Start(t, st)
}

// Start starts a run recorded as st (its spec is st.SpecSource) at T0: a child run, such as a
// shard child, whose Started a test builds from its parent's ChildWorkflowScheduled.
func Start(t testing.TB, st history.Started) *Sim {
	t.Helper()
	s := &Sim{t: t, W: Load(t, st.SpecSource), Now: T0, Timers: map[string]time.Time{}, Inputs: map[string]any{}}
	s.R = interpreter.New(s.W, st)
	s.Apply(history.Event{Type: history.WorkflowStarted, Data: history.MustData(st)})
	return s
}

// Apply records an input at the current time, then the decisions it yields, and returns them.
func (s *Sim) Apply(ev history.Event) []history.Event {
	s.t.Helper()
	ev.Seq = uint64(len(s.Events) + 1)
	ev.Time = s.Now
	s.Events = append(s.Events, ev)
	out, err := s.R.Apply(ev)
	if err != nil {
		s.t.Fatalf("apply %s: %v", ev.Type, err)
	}
	for _, d := range out {
		d.Seq = uint64(len(s.Events) + 1)
		s.Events = append(s.Events, d)
		switch d.Type {
		case history.ActivityScheduled, history.ActivityRetryScheduled:
			s.Acts = append(s.Acts, d)
		case history.ActivityCancelled:
			s.dropAct(d.ActivityExecutionID)
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](d)
			s.Timers[ts.TimerID] = ts.FireAt
		case history.TimerCancelled:
			ref, _ := history.DataOf[history.TimerRef](d)
			delete(s.Timers, ref.TimerID)
		}
	}
	return out
}

func (s *Sim) dropAct(execID string) {
	for i, a := range s.Acts {
		if a.ActivityExecutionID == execID {
			s.Acts = append(s.Acts[:i], s.Acts[i+1:]...)
			return
		}
	}
}

// Answer is how a test plays the plugins: an output, or a failure. A failure of category
// timeout is recorded as ActivityTimedOut, as the engine does when a try's timeout expires.
type Answer func(activity string, input any, attempt int) (any, *history.Failure)

// Echo answers every activity with its input.
func Echo(_ string, in any, _ int) (any, *history.Failure) { return in, nil }

// Step answers the oldest owed activity; a retry first waits for its available_at, as the
// engine's tasks do.
func (s *Sim) Step(fn Answer) {
	s.t.Helper()
	a := s.Acts[0]
	s.Acts = s.Acts[1:]
	attempt := a.Attempt
	if a.Type == history.ActivityRetryScheduled {
		rs, _ := history.DataOf[history.RetrySchedule](a)
		if rs.AvailableAt.After(s.Now) {
			s.Now = rs.AvailableAt
		}
		attempt = rs.NextAttempt
	}
	sched := s.scheduleOf(a.ActivityExecutionID)
	var in any
	_ = json.Unmarshal(sched.Input, &in)
	s.Inputs[a.Step] = in
	out, f := fn(sched.Activity, in, attempt)
	ev := history.Event{Step: a.Step, ActivityExecutionID: a.ActivityExecutionID, Attempt: attempt}
	switch {
	case f == nil:
		ev.Type, ev.Data = history.ActivityCompleted, history.MustData(history.ActivityResult{Output: history.MustData(out)})
	case f.Category == history.CategoryTimeout:
		ev.Type, ev.Data = history.ActivityTimedOut, history.MustData(history.AttemptFailure{Failure: *f})
	default:
		ev.Type, ev.Data = history.ActivityAttemptFailed, history.MustData(history.AttemptFailure{Failure: *f})
	}
	s.Apply(ev)
}

// RunActivities answers owed activities, oldest first, until none is owed.
func (s *Sim) RunActivities(fn Answer) {
	s.t.Helper()
	for guard := 0; len(s.Acts) > 0; guard++ {
		if guard > 10000 {
			s.t.Fatal("activities never settle")
		}
		s.Step(fn)
	}
}

func (s *Sim) scheduleOf(execID string) history.ActivitySchedule {
	s.t.Helper()
	for _, e := range s.Events {
		if e.Type == history.ActivityScheduled && e.ActivityExecutionID == execID {
			a, _ := history.DataOf[history.ActivitySchedule](e)
			return a
		}
	}
	s.t.Fatalf("no ActivityScheduled for %s", execID)
	return history.ActivitySchedule{}
}

// FireTimers advances the clock to each timer due by until, earliest first (then by id), and
// fires it.
func (s *Sim) FireTimers(until time.Time) {
	s.t.Helper()
	for {
		id, at := "", time.Time{}
		for k, v := range s.Timers {
			if !v.After(until) && (id == "" || v.Before(at) || (v.Equal(at) && k < id)) {
				id, at = k, v
			}
		}
		if id == "" {
			return
		}
		delete(s.Timers, id)
		if at.After(s.Now) {
			s.Now = at
		}
		s.Apply(history.Event{Type: history.TimerFired, Data: history.MustData(history.TimerRef{TimerID: id})})
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

// Last is the latest event of the history.
func (s *Sim) Last() history.Event { return s.Events[len(s.Events)-1] }

// Closed is the payload of the terminal event; t fails if the run is still open.
func (s *Sim) Closed(t testing.TB) history.Closed {
	t.Helper()
	if !s.Last().Type.Terminal() {
		t.Fatalf("run not closed; last event %s", s.Last().Type)
	}
	c, err := history.DataOf[history.Closed](s.Last())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Output is the workflow's output, decoded; t fails unless the run completed.
func (s *Sim) Output(t testing.TB) any {
	t.Helper()
	if s.Last().Type != history.WorkflowCompleted {
		c := s.Closed(t)
		t.Fatalf("run ended with %s: %+v", s.Last().Type, c.Failure)
	}
	var v any
	_ = json.Unmarshal(s.Closed(t).Output, &v)
	return v
}

// ReplayOK checks docs/reliability.md G4: a fresh Run fed the recorded history decides exactly
// the same, and the history passes history.Check.
func (s *Sim) ReplayOK(t testing.TB) {
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
		SpecFile: st.SpecFile, StartedAt: T0, LastSeq: last.Seq, ParentRunID: st.ParentRunID}
	if last.Type.Terminal() {
		r.ClosedAt = last.Time
		r.Status, r.ClosedReason = history.ClosedBy(last)
	}
	return r
}
