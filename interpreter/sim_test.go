package interpreter

import (
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sim is a tiny deterministic engine for tests: it records every event with its seq, keeps
// the activities and timers the run asked for, and lets a test answer them.
type sim struct {
	t       *testing.T
	w       *spec.Workflow
	r       *Run
	events  []history.Event
	now     time.Time
	acts    []history.Event // ActivityScheduled / ActivityRetryScheduled still owed
	timers  map[string]time.Time
	results map[string]any // step path -> last activity input, for assertions
}

func load(t *testing.T, src string) *spec.Workflow {
	t.Helper()
	w, ds := spec.Load("test.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatalf("spec: %s", ds.Error())
	}
	return w
}

func newSim(t *testing.T, src string, input any) *sim {
	t.Helper()
	s := &sim{t: t, w: load(t, src), now: t0, timers: map[string]time.Time{}, results: map[string]any{}}
	st := history.Started{WorkflowID: "wf", RunID: "run1", Input: mustJSON(input), SpecFile: "test.wend.yaml"}
	s.r = New(s.w, st)
	s.apply(history.Event{Type: history.WorkflowStarted, Data: history.MustData(st)})
	return s
}

func (s *sim) apply(ev history.Event) []history.Event {
	s.t.Helper()
	ev.Seq = uint64(len(s.events) + 1)
	ev.Time = s.now
	s.events = append(s.events, ev)
	out, err := s.r.Apply(ev)
	if err != nil {
		s.t.Fatalf("apply %s: %v", ev.Type, err)
	}
	for _, d := range out {
		d.Seq = uint64(len(s.events) + 1)
		s.events = append(s.events, d)
		switch d.Type {
		case history.ActivityScheduled, history.ActivityRetryScheduled:
			s.acts = append(s.acts, d)
		case history.ActivityCancelled:
			s.dropAct(d.ActivityExecutionID)
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](d)
			s.timers[ts.TimerID] = ts.FireAt
		case history.TimerCancelled:
			ref, _ := history.DataOf[history.TimerRef](d)
			delete(s.timers, ref.TimerID)
		}
	}
	return out
}

func (s *sim) dropAct(execID string) {
	for i, a := range s.acts {
		if a.ActivityExecutionID == execID {
			s.acts = append(s.acts[:i], s.acts[i+1:]...)
			return
		}
	}
}

// answer is how a test plays the plugins: an output, or a failure.
type answer func(activity string, input any, attempt int) (any, *history.Failure)

// runActivities answers owed activities (oldest first) until none is owed; retries wait for
// the clock like the engine's tasks do.
func (s *sim) runActivities(fn answer) {
	s.t.Helper()
	for guard := 0; len(s.acts) > 0; guard++ {
		if guard > 10000 {
			s.t.Fatal("activities never settle")
		}
		a := s.acts[0]
		s.acts = s.acts[1:]
		attempt := a.Attempt
		sched := s.scheduleOf(a.ActivityExecutionID)
		if a.Type == history.ActivityRetryScheduled {
			rs, _ := history.DataOf[history.RetrySchedule](a)
			if rs.AvailableAt.After(s.now) {
				s.now = rs.AvailableAt
			}
			attempt = rs.NextAttempt
		}
		var in any
		_ = json.Unmarshal(sched.Input, &in)
		s.results[a.Step] = in
		out, f := fn(sched.Activity, in, attempt)
		if f != nil {
			s.apply(history.Event{Type: history.ActivityAttemptFailed, Step: a.Step, ActivityExecutionID: a.ActivityExecutionID,
				Attempt: attempt, Data: history.MustData(history.AttemptFailure{Failure: *f})})
			continue
		}
		s.apply(history.Event{Type: history.ActivityCompleted, Step: a.Step, ActivityExecutionID: a.ActivityExecutionID,
			Attempt: attempt, Data: history.MustData(history.ActivityResult{Output: mustJSON(out)})})
	}
}

func (s *sim) scheduleOf(execID string) history.ActivitySchedule {
	for _, e := range s.events {
		if e.Type == history.ActivityScheduled && e.ActivityExecutionID == execID {
			a, _ := history.DataOf[history.ActivitySchedule](e)
			return a
		}
	}
	s.t.Fatalf("no ActivityScheduled for %s", execID)
	return history.ActivitySchedule{}
}

// fireTimers advances the clock to each due timer in order and fires it.
func (s *sim) fireTimers(until time.Time) {
	for {
		id, at := "", time.Time{}
		ids := make([]string, 0, len(s.timers))
		for k := range s.timers {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		for _, k := range ids {
			if v := s.timers[k]; !v.After(until) && (id == "" || v.Before(at)) {
				id, at = k, v
			}
		}
		if id == "" {
			return
		}
		delete(s.timers, id)
		if at.After(s.now) {
			s.now = at
		}
		s.apply(history.Event{Type: history.TimerFired, Data: history.MustData(history.TimerRef{TimerID: id})})
	}
}

func (s *sim) signal(name string, data any) {
	s.apply(history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: name, Data: mustJSON(data)})})
}

func (s *sim) last() history.Event { return s.events[len(s.events)-1] }

func (s *sim) closed(t *testing.T) history.Closed {
	t.Helper()
	if !s.last().Type.Terminal() {
		t.Fatalf("run not closed; last event %s", s.last().Type)
	}
	c, err := history.DataOf[history.Closed](s.last())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *sim) output(t *testing.T) any {
	t.Helper()
	if s.last().Type != history.WorkflowCompleted {
		c := s.closed(t)
		t.Fatalf("run ended with %s: %+v", s.last().Type, c.Failure)
	}
	var v any
	_ = json.Unmarshal(s.closed(t).Output, &v)
	return v
}

// replayOK checks G4: a fresh Run fed the recorded history decides exactly the same.
func (s *sim) replayOK(t *testing.T) {
	t.Helper()
	st, _ := history.DataOf[history.Started](s.events[0])
	if err := New(s.w, st).Replay(s.events); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if ps := history.Check(history.Run{RunID: "run1", Status: statusOf(s.last()), LastSeq: s.last().Seq}, s.events); len(ps) > 0 {
		t.Fatalf("history check: %v", ps)
	}
}

func statusOf(e history.Event) string {
	if e.Type.Terminal() {
		return "closed"
	}
	return history.StatusRunning
}

func types(evs []history.Event) []history.EventType {
	out := make([]history.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// echo answers every activity with its input.
func echo(_ string, in any, _ int) (any, *history.Failure) { return in, nil }
