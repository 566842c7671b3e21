package history

import (
	"errors"
	"testing"
	"time"
)

func TestEncodeDecodeEvent(t *testing.T) {
	e := Event{Seq: 7, Type: ActivityCompleted, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Step: "steps[1]", ActivityExecutionID: "x", Attempt: 2, Data: []byte(`{"output":1}`)}
	b, err := EncodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 7 || got.Type != e.Type || !got.Time.Equal(e.Time) || string(got.Data) != `{"output":1}` || got.Attempt != 2 {
		t.Fatalf("round trip: %+v", got)
	}
	// Every single-bit flip anywhere in the record is detected.
	for i := range len(b) * 8 {
		c := append([]byte(nil), b...)
		c[i/8] ^= 1 << (i % 8)
		if _, err := DecodeEvent(c); err == nil {
			t.Fatalf("bit flip %d not detected", i)
		}
	}
	if _, err := DecodeEvent(b[:3]); !errors.Is(err, ErrShort) {
		t.Fatalf("short record: %v", err)
	}
}

func TestCheck(t *testing.T) {
	ev := func(seq uint64, typ EventType) Event { return Event{Seq: seq, Type: typ} }
	open := Run{RunID: "r", Status: StatusRunning}
	closed := Run{RunID: "r", Status: StatusCompleted}
	tests := []struct {
		name   string
		run    Run
		events []Event
		want   int
	}{
		{"healthy open", withLast(open, 2), []Event{ev(1, WorkflowStarted), ev(2, ActivityScheduled)}, 0},
		{"healthy closed", withLast(closed, 2), []Event{ev(1, WorkflowStarted), ev(2, WorkflowCompleted)}, 0},
		{"gap", withLast(open, 3), []Event{ev(1, WorkflowStarted), ev(3, ActivityScheduled)}, 1},
		{"no start", withLast(open, 1), []Event{ev(1, ActivityScheduled)}, 1},
		{"second start", withLast(open, 2), []Event{ev(1, WorkflowStarted), ev(2, WorkflowStarted)}, 1},
		{"after terminal", withLast(closed, 3), []Event{ev(1, WorkflowStarted), ev(2, WorkflowCompleted), ev(3, TimerFired)}, 1},
		{"status disagrees", withLast(open, 2), []Event{ev(1, WorkflowStarted), ev(2, WorkflowFailed)}, 1},
		{"record behind", withLast(open, 1), []Event{ev(1, WorkflowStarted), ev(2, TimerFired)}, 1},
		{"empty", open, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Check(tt.run, tt.events); len(got) != tt.want {
				t.Errorf("Check found %d problems, want %d: %v", len(got), tt.want, got)
			}
		})
	}
}

func withLast(r Run, seq uint64) Run { r.LastSeq = seq; return r }
