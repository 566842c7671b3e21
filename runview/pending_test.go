package runview

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// fold folds events after a WorkflowStarted, as an open run's record says.
func fold(t *testing.T, events ...history.Event) *View {
	t.Helper()
	all := append([]history.Event{{Type: history.WorkflowStarted, Data: history.MustData(history.Started{RunID: "r"})}}, events...)
	for i := range all {
		all[i].Seq = uint64(i + 1)
	}
	v, err := Fold(history.Run{RunID: "r", Status: history.StatusRunning}, all)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPending(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(typ history.EventType, step, exec string, attempt int, data any) history.Event {
		return history.Event{Type: typ, Step: step, ActivityExecutionID: exec, Attempt: attempt, Time: at, Data: history.MustData(data)}
	}
	sched := ev(history.ActivityScheduled, "steps[0]", "x1", 1, history.ActivitySchedule{Plugin: "p", Activity: "a"})
	tests := []struct {
		name   string
		events []history.Event
		want   []Wait
	}{
		{"activity in flight", []history.Event{sched},
			[]Wait{{Kind: WaitActivity, Step: "steps[0]", Activity: "p.a", ActivityExecutionID: "x1", Attempt: 1}}},
		{"activity done", []history.Event{sched, ev(history.ActivityCompleted, "steps[0]", "x1", 1, history.ActivityResult{})}, nil},
		{"retry backing off", []history.Event{sched,
			ev(history.ActivityAttemptFailed, "steps[0]", "x1", 1, history.AttemptFailure{}),
			ev(history.ActivityRetryScheduled, "steps[0]", "x1", 1, history.RetrySchedule{NextAttempt: 2, AvailableAt: at.Add(time.Minute)})},
			[]Wait{{Kind: WaitActivity, Step: "steps[0]", Activity: "p.a", ActivityExecutionID: "x1", Attempt: 2, Until: at.Add(time.Minute)}}},
		{"failed for good", []history.Event{sched, ev(history.ActivityFailed, "steps[0]", "x1", 1, history.AttemptFailure{})}, nil},
		{"timer", []history.Event{ev(history.TimerScheduled, "steps[1]", "", 0, history.TimerSchedule{TimerID: "t", FireAt: at, Purpose: "delay"})},
			[]Wait{{Kind: WaitTimer, Step: "steps[1]", Until: at, Purpose: "delay"}}},
		{"timer fired", []history.Event{ev(history.TimerScheduled, "steps[1]", "", 0, history.TimerSchedule{TimerID: "t"}),
			ev(history.TimerFired, "", "", 0, history.TimerRef{TimerID: "t"})}, nil},
		{"child", []history.Event{ev(history.ChildWorkflowScheduled, "steps[2]", "", 0, history.ChildSchedule{WorkflowID: "c"})},
			[]Wait{{Kind: WaitChild, Step: "steps[2]", WorkflowID: "c"}}},
		{"child back", []history.Event{ev(history.ChildWorkflowScheduled, "steps[2]", "", 0, history.ChildSchedule{WorkflowID: "c"}),
			ev(history.ChildWorkflowFailed, "steps[2]", "", 0, history.Closed{})}, nil},
		{"awaited workflow", []history.Event{ev(history.WorkflowWaitScheduled, "steps[3]", "", 0, history.WaitSchedule{WorkflowID: "o"})},
			[]Wait{{Kind: WaitWorkflow, Step: "steps[3]", WorkflowID: "o"}}},
		{"oldest first across kinds", []history.Event{
			ev(history.TimerScheduled, "steps[1]", "", 0, history.TimerSchedule{TimerID: "t", FireAt: at, Purpose: "timeout"}), sched},
			[]Wait{{Kind: WaitTimer, Step: "steps[1]", Until: at, Purpose: "timeout"},
				{Kind: WaitActivity, Step: "steps[0]", Activity: "p.a", ActivityExecutionID: "x1", Attempt: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fold(t, tt.events...).Pending()
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				g.Since = time.Time{}
				if g != w {
					t.Errorf("wait %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestPendingSignals(t *testing.T) {
	v := fold(t,
		history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: "a"})},
		history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: "b", Data: []byte(`{"x":1}`)})},
		history.Event{Type: history.SignalApplied, Data: history.MustData(history.Signal{Name: "a", ReceivedSeq: 2})},
	)
	got := v.PendingSignals()
	if len(got) != 1 || got[0].Name != "b" || got[0].ReceivedSeq != 3 || string(got[0].Data) != `{"x":1}` {
		t.Fatalf("pending signals: %+v", got)
	}
}
