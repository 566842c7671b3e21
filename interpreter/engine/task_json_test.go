package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestActivityTaskData(t *testing.T) {
	base := activityTask{WorkflowID: "order-7", RunID: "r-1", Step: "steps[2]@3.steps[0]", ExecID: "x-9", Attempt: 2,
		Plugin: "demo", Activity: "echo", Input: json.RawMessage(`{"i":1}`)}
	variants := []func(*activityTask){
		func(*activityTask) {},
		func(a *activityTask) { a.TimeoutMS, a.HeartbeatMS = 30000, 500 },
		func(a *activityTask) { a.Input = json.RawMessage(" [ 1 , {\"b\" : null} ] ") },
		func(a *activityTask) { a.Input = json.RawMessage(`{"html":"<b>&</b>"}`) },
		func(a *activityTask) { a.Input = json.RawMessage("\"sep\u2028\"") },
		func(a *activityTask) { a.Input = nil },
		func(a *activityTask) { a.WorkflowID, a.Step = "wf \"<é>\"\n", "\xff" },
		func(a *activityTask) { a.Attempt, a.TimeoutMS, a.HeartbeatMS = -1, -2, -3 },
		func(a *activityTask) {
			a.RetryOfTaskID, a.RetryAfterAttemptID, a.RetryAfterAttempt, a.RetryBackoffSeconds = "x-9/1", "x-9#1", 1, 0.25
		},
		func(a *activityTask) { a.RetryBackoffSeconds = 1e-7 },
	}
	for i, v := range variants {
		at := base
		v(&at)
		want, err := json.Marshal(at)
		if err != nil {
			t.Fatal(err)
		}
		if got := at.data(); !bytes.Equal(got, want) {
			t.Errorf("variant %d:\ndata         %s\njson.Marshal %s", i, got, want)
		}
	}
}

func BenchmarkActivityTaskData(b *testing.B) {
	at := activityTask{WorkflowID: "order-7", RunID: "0193b7c2-6f1e-7cc1-9a55-3f0c1a2b4d5e", Step: "steps[17]", ExecID: "x-17",
		Attempt: 1, Plugin: "demo", Activity: "echo", Input: json.RawMessage(`{"i":17}`), TimeoutMS: 30000}
	b.Run("data", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = at.data()
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(at)
		}
	})
}
