package export

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestHeartbeatProgressExported: a try's last recorded heartbeat progress is in its attempt.
func TestHeartbeatProgressExported(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []history.Event{
		{Seq: 1, Type: history.WorkflowStarted, Time: t0, Data: history.MustData(history.Started{WorkflowID: "w", RunID: "r", Input: []byte(`null`)})},
		{Seq: 2, Type: history.ActivityScheduled, Time: t0, Step: "steps[0]", ActivityExecutionID: "r:steps[0]", Attempt: 1,
			Data: history.MustData(history.ActivitySchedule{Plugin: "p", Activity: "a", Input: []byte(`null`), Tries: 1})},
		{Seq: 3, Type: history.ActivityHeartbeatRecorded, Time: t0.Add(time.Second), Step: "steps[0]", ActivityExecutionID: "r:steps[0]", Attempt: 1,
			Data: history.MustData(history.HeartbeatRecord{Progress: []byte(`{"page":3}`)})},
		{Seq: 4, Type: history.ActivityHeartbeatRecorded, Time: t0.Add(2 * time.Second), Step: "steps[0]", ActivityExecutionID: "r:steps[0]", Attempt: 1,
			Data: history.MustData(history.HeartbeatRecord{Progress: []byte(`{"page":7}`)})},
	}
	doc, err := Build(history.Run{WorkflowID: "w", RunID: "r", Status: history.StatusRunning, LastSeq: 4, StartedAt: t0}, evs)
	if err != nil {
		t.Fatal(err)
	}
	at := doc.Activities[0].Attempts[0]
	if at.Heartbeats != 2 || string(at.LastProgress) != `{"page":7}` {
		t.Fatalf("attempt %+v", at)
	}
}
