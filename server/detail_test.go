package server

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

func TestPending(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(typ history.EventType, step, exec string, data any) history.Event {
		return history.Event{Type: typ, Step: step, ActivityExecutionID: exec, Time: at, Data: history.MustData(data)}
	}
	sched := ev(history.ActivityScheduled, "steps[0]", "x1", history.ActivitySchedule{Plugin: "p", Activity: "a"})
	tests := []struct {
		name   string
		events []history.Event
		want   []Wait
	}{
		{"activity in flight", []history.Event{sched},
			[]Wait{{Kind: WaitActivity, Step: "steps[0]", Activity: "p.a", ActivityExecutionID: "x1", Attempt: 1}}},
		{"activity done", []history.Event{sched, ev(history.ActivityCompleted, "steps[0]", "x1", history.ActivityResult{})}, nil},
		{"retry backing off", []history.Event{sched,
			ev(history.ActivityAttemptFailed, "steps[0]", "x1", history.AttemptFailure{}),
			ev(history.ActivityRetryScheduled, "steps[0]", "x1", history.RetrySchedule{NextAttempt: 2, AvailableAt: at.Add(time.Minute)})},
			[]Wait{{Kind: WaitActivity, Step: "steps[0]", Activity: "p.a", ActivityExecutionID: "x1", Attempt: 2, Until: at.Add(time.Minute)}}},
		{"failed for good", []history.Event{sched, ev(history.ActivityFailed, "steps[0]", "x1", history.AttemptFailure{})}, nil},
		{"timer", []history.Event{ev(history.TimerScheduled, "steps[1]", "", history.TimerSchedule{TimerID: "t", FireAt: at, Purpose: "delay"})},
			[]Wait{{Kind: WaitTimer, Step: "steps[1]", Until: at, Purpose: "delay"}}},
		{"timer fired", []history.Event{ev(history.TimerScheduled, "steps[1]", "", history.TimerSchedule{TimerID: "t"}),
			ev(history.TimerFired, "", "", history.TimerRef{TimerID: "t"})}, nil},
		{"child", []history.Event{ev(history.ChildWorkflowScheduled, "steps[2]", "", history.ChildSchedule{WorkflowID: "c"})},
			[]Wait{{Kind: WaitChild, Step: "steps[2]", WorkflowID: "c"}}},
		{"child back", []history.Event{ev(history.ChildWorkflowScheduled, "steps[2]", "", history.ChildSchedule{WorkflowID: "c"}),
			ev(history.ChildWorkflowFailed, "steps[2]", "", history.Closed{})}, nil},
		{"awaited workflow", []history.Event{ev(history.WorkflowWaitScheduled, "steps[3]", "", history.WaitSchedule{WorkflowID: "o"})},
			[]Wait{{Kind: WaitWorkflow, Step: "steps[3]", WorkflowID: "o"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.events {
				tt.events[i].Seq = uint64(i + 1)
			}
			got := Pending(tt.events)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				g.seq, g.Since = 0, time.Time{}
				if g != w {
					t.Errorf("wait %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestReceivedSignals(t *testing.T) {
	evs := []history.Event{
		{Seq: 1, Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: "a"})},
		{Seq: 2, Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: "b"})},
		{Seq: 3, Type: history.SignalApplied, Data: history.MustData(history.Signal{Name: "a", ReceivedSeq: 1})},
	}
	got := received(evs)
	if len(got) != 1 || got[0].Name != "b" || got[0].ReceivedSeq != 2 {
		t.Fatalf("received: %+v", got)
	}
}
