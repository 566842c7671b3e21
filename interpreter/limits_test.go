package interpreter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// TestPendingLimit is docs/reliability.md L2: the 2,001st open activity fails its step with a
// structural_limit failure that names the limit, and the run records it, not a panic.
func TestPendingLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(sim.Head + "steps:\n  - parallel:\n")
	for range interpreter.MaxPending + 1 {
		b.WriteString("      - {activity: p.x}\n")
	}
	s := sim.New(t, b.String(), nil)
	c := s.Closed(t)
	if c.Failure == nil || c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "2000 open activities") {
		t.Fatalf("closed %s %+v", s.Last().Type, c.Failure)
	}
	if n := len(compensationSteps(s.Events, history.ActivityScheduled)); n != interpreter.MaxPending {
		t.Fatalf("%d activities scheduled, want %d", n, interpreter.MaxPending)
	}
	if n := len(compensationSteps(s.Events, history.ActivityCancelled)); n != interpreter.MaxPending {
		t.Fatalf("%d activities cancelled, want %d", n, interpreter.MaxPending)
	}
	s.ReplayOK(t)
}

func TestHistoryEventLimit(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - wait_for_signal: never\n", nil)
	interpreter.SetEventCount(s.R, interpreter.MaxEvents) // as if the history were full
	s.Signal("other", nil)
	c := s.Closed(t)
	if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "51200 events") {
		t.Fatalf("closed %+v", c.Failure)
	}
}

func TestHistoryBytesLimit(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - wait_for_signal: never\n", nil)
	interpreter.SetPayloadBytes(s.R, interpreter.MaxHistoryBytes)
	s.Signal("other", nil)
	c := s.Closed(t)
	if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "50 MiB") {
		t.Fatalf("closed %+v", c.Failure)
	}
}

func TestSignalLimitFailsTheRun(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - wait_for_signal: never\n", nil)
	for range interpreter.MaxSignals {
		s.Signal("other", nil)
	}
	if s.Last().Type.Terminal() {
		t.Fatalf("closed at %d signals", interpreter.MaxSignals)
	}
	if near := s.R.NearLimits(); len(near) != 1 || near[0].What != "unconsumed signals" {
		t.Fatalf("near limits %v", near)
	}
	s.Signal("other", nil)
	c := s.Closed(t)
	if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "over the limit of 5000") {
		t.Fatalf("closed %+v", c.Failure)
	}
}

// TestStructuralLimitReachedFailsTheRun: a limit the hosting engine measured (Temporal's own
// history length) ends the run like one wend counts: open work cancelled, structural_limit,
// and the history replays.
func TestStructuralLimitReachedFailsTheRun(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - activity: p.x\n", nil)
	s.Apply(history.Event{Type: history.StructuralLimitReached,
		Data: history.MustData(history.LimitReached{Message: "Temporal history has 48640 events"})})
	c := s.Closed(t)
	if s.Last().Type != history.WorkflowFailed || c.Failure.Category != history.CategoryStructuralLimit ||
		c.Failure.Message != "Temporal history has 48640 events" {
		t.Fatalf("closed %s %+v", s.Last().Type, c.Failure)
	}
	if n := len(compensationSteps(s.Events, history.ActivityCancelled)); n != 1 {
		t.Fatalf("%d activities cancelled, want 1", n)
	}
	s.ReplayOK(t)
}

func TestStructuralLimitReachedBeforeStartIsAnError(t *testing.T) {
	r := interpreter.New(sim.Load(t, sim.Head+"steps:\n  - activity: p.x\n"), history.Started{})
	_, err := r.Apply(history.Event{Type: history.StructuralLimitReached, Data: history.MustData(history.LimitReached{Message: "x"})})
	if err == nil || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("err %v", err)
	}
}

// TestAwaitsEndsWithTheWait: an engine asks Awaits before feeding a child's or wait's outcome;
// it is true while the step waits and false once the step's timeout gave up on it.
func TestAwaitsEndsWithTheWait(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - wait_for_workflow: other\n    timeout: 1m\n  - activity: p.x\n", nil)
	step := s.Events[1].Step
	if s.Events[1].Type != history.WorkflowWaitScheduled || !s.R.Awaits(step) {
		t.Fatalf("after start: %s, awaits %v", s.Events[1].Type, s.R.Awaits(step))
	}
	if s.R.Awaits("steps[1]") {
		t.Fatal("awaits a step that is not a wait")
	}
	s.FireTimers(sim.T0.Add(time.Minute))
	if s.R.Awaits(step) {
		t.Fatal("still awaits after the wait timed out")
	}
}
