package interpreter

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestPendingLimit is RELIABILITY I2: the 2,001st open activity fails its step with a
// structural_limit failure that names the limit, and the run records it, not a panic.
func TestPendingLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(head + "steps:\n  - parallel:\n")
	for range MaxPending + 1 {
		b.WriteString("      - {activity: p.x}\n")
	}
	s := newSim(t, b.String(), nil)
	c := s.closed(t)
	if c.Failure == nil || c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "2000 open activities") {
		t.Fatalf("closed %s %+v", s.last().Type, c.Failure)
	}
	if n := len(compensationSteps(s.events, history.ActivityScheduled)); n != MaxPending {
		t.Fatalf("%d activities scheduled, want %d", n, MaxPending)
	}
	if n := len(compensationSteps(s.events, history.ActivityCancelled)); n != MaxPending {
		t.Fatalf("%d activities cancelled, want %d", n, MaxPending)
	}
	s.replayOK(t)
}

func TestHistoryEventLimit(t *testing.T) {
	s := newSim(t, head+"steps:\n  - wait_for_signal: never\n", nil)
	s.r.count = MaxEvents // as if the history were full
	s.signal("other", nil)
	c := s.closed(t)
	if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "51200 events") {
		t.Fatalf("closed %+v", c.Failure)
	}
}

func TestHistoryBytesLimit(t *testing.T) {
	s := newSim(t, head+"steps:\n  - wait_for_signal: never\n", nil)
	s.r.bytes = MaxHistoryBytes
	s.signal("other", nil)
	c := s.closed(t)
	if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "50 MiB") {
		t.Fatalf("closed %+v", c.Failure)
	}
}

func TestSignalLimitFailsTheRun(t *testing.T) {
	s := newSim(t, head+"steps:\n  - wait_for_signal: never\n", nil)
	for range MaxSignals {
		s.signal("other", nil)
	}
	if s.last().Type.Terminal() {
		t.Fatalf("closed at %d signals", MaxSignals)
	}
	if near := s.r.NearLimits(); len(near) != 1 || near[0].What != "unconsumed signals" {
		t.Fatalf("near limits %v", near)
	}
	s.signal("other", nil)
	c := s.closed(t)
	if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "over the limit of 5000") {
		t.Fatalf("closed %+v", c.Failure)
	}
}
