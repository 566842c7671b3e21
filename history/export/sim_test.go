package export_test

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

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const head = "wend: v1\nname: t\nplugins: {p: ./p}\n"

// sim drives the real interpreter the way the engine does, on a virtual clock, so the tests
// export histories the interpreter really writes (a copy of interpreter/sim_test.go, reduced).
type sim struct {
	t      *testing.T
	w      *spec.Workflow
	r      *interpreter.Run
	events []history.Event
	now    time.Time
	acts   []history.Event // ActivityScheduled / ActivityRetryScheduled still owed
	timers map[string]time.Time
}

func newSim(t *testing.T, src string, input any) *sim {
	t.Helper()
	w, ds := spec.Load("test.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatalf("spec: %s", ds.Error())
	}
	sum := sha256.Sum256([]byte(src))
	s := &sim{t: t, w: w, now: t0, timers: map[string]time.Time{}}
	st := history.Started{WorkflowID: "wf", RunID: "run1", Input: history.MustData(input), SpecFile: "test.wend.yaml",
		SpecSource: src, SpecSHA256: hex.EncodeToString(sum[:]), ExecutionStarted: t0}
	s.r = interpreter.New(w, st)
	s.apply(history.Event{Type: history.WorkflowStarted, Data: history.MustData(st)})
	return s
}

// apply records an input at the current time, then the decisions it yields.
func (s *sim) apply(ev history.Event) {
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
			for i, a := range s.acts {
				if a.ActivityExecutionID == d.ActivityExecutionID {
					s.acts = append(s.acts[:i], s.acts[i+1:]...)
					break
				}
			}
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](d)
			s.timers[ts.TimerID] = ts.FireAt
		case history.TimerCancelled:
			ref, _ := history.DataOf[history.TimerRef](d)
			delete(s.timers, ref.TimerID)
		}
	}
}

// answer plays the plugins: an output, or a failure. A failure with category timeout is
// recorded as ActivityTimedOut, as the engine does when a try's timeout expires.
type answer func(activity string, input any, attempt int) (any, *history.Failure)

// step answers the oldest owed activity; a retry first waits for its available_at.
func (s *sim) step(fn answer) {
	s.t.Helper()
	a := s.acts[0]
	s.acts = s.acts[1:]
	attempt := a.Attempt
	if a.Type == history.ActivityRetryScheduled {
		rs, _ := history.DataOf[history.RetrySchedule](a)
		if rs.AvailableAt.After(s.now) {
			s.now = rs.AvailableAt
		}
		attempt = rs.NextAttempt
	}
	sched, _ := s.r.Activity(a.ActivityExecutionID)
	var in any
	_ = json.Unmarshal(sched.Input, &in)
	out, f := fn(sched.Activity, in, attempt)
	base := history.Event{Step: a.Step, ActivityExecutionID: a.ActivityExecutionID, Attempt: attempt}
	switch {
	case f == nil:
		base.Type, base.Data = history.ActivityCompleted, history.MustData(history.ActivityResult{Output: history.MustData(out)})
	case f.Category == history.CategoryTimeout:
		base.Type, base.Data = history.ActivityTimedOut, history.MustData(history.AttemptFailure{Failure: *f})
	default:
		base.Type, base.Data = history.ActivityAttemptFailed, history.MustData(history.AttemptFailure{Failure: *f})
	}
	s.apply(base)
}

// runActivities answers owed activities until none is owed.
func (s *sim) runActivities(fn answer) {
	s.t.Helper()
	for guard := 0; len(s.acts) > 0; guard++ {
		if guard > 1000 {
			s.t.Fatal("activities never settle")
		}
		s.step(fn)
	}
}

// fireTimers advances the clock to each timer due by until, in order, and fires it.
func (s *sim) fireTimers(until time.Time) {
	s.t.Helper()
	for {
		id, at := "", time.Time{}
		for k, v := range s.timers {
			if !v.After(until) && (id == "" || v.Before(at) || (v.Equal(at) && k < id)) {
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
	s.t.Helper()
	s.apply(history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: name, Data: history.MustData(data)})})
}

func (s *sim) cancel(reason string) {
	s.t.Helper()
	s.apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: reason})})
}

// run is the run record the engine would hold for the history so far.
func (s *sim) run() history.Run {
	last := s.events[len(s.events)-1]
	r := history.Run{WorkflowID: "wf", RunID: "run1", Name: s.w.Name, Status: history.StatusRunning,
		SpecFile: "test.wend.yaml", StartedAt: t0, LastSeq: last.Seq}
	if last.Type.Terminal() {
		r.ClosedAt = last.Time
		c, _ := history.DataOf[history.Closed](last)
		switch last.Type {
		case history.WorkflowCompleted:
			r.Status, r.ClosedReason = history.StatusCompleted, history.ClosedCompleted
		case history.WorkflowCancelled:
			r.Status, r.ClosedReason = history.StatusCancelled, history.ClosedCancelled
		case history.WorkflowTimedOut:
			r.Status, r.ClosedReason = history.StatusFailed, history.ClosedTimedOut
		default:
			r.Status, r.ClosedReason = history.StatusFailed, history.ClosedFailed
		}
		if c.ClosedReason != "" {
			r.ClosedReason = c.ClosedReason
		}
	}
	if ps := history.Check(r, s.events); len(ps) > 0 {
		s.t.Fatalf("the sim wrote a bad history: %v", ps)
	}
	return r
}
