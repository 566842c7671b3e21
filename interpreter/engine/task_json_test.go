package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

func checkActivityTaskData(t *testing.T, at activityTask) {
	t.Helper()
	want, wantErr := json.Marshal(at)
	var got []byte
	func() {
		defer func() {
			if r := recover(); r != nil && wantErr == nil {
				t.Fatalf("%+v: panic %v, json.Marshal gives %s", at, r, want)
			}
		}()
		got = at.data()
	}()
	if wantErr != nil {
		if got != nil {
			t.Fatalf("%+v: %s, json.Marshal's error %v", at, got, wantErr)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%+v:\ndata         %s\njson.Marshal %s", at, got, want)
	}
}

func TestActivityTaskData(t *testing.T) {
	for _, at := range []activityTask{
		{Input: json.RawMessage(`null`)},
		{WorkflowID: "w", RunID: "r", Step: "steps[2]@1.steps[0]", ExecID: "r:steps[2]@1.steps[0]", Attempt: 1, Plugin: "p", Activity: "echo",
			Input: json.RawMessage(`{"a":[1,2]}`), TimeoutMS: 30000, HeartbeatMS: 500},
		{WorkflowID: "é<", Step: "\"q\"", Input: json.RawMessage(` { "a" : "b c" } `), Attempt: -2},
		{Input: json.RawMessage(`{"html":"<b>"}`)},
		{Input: nil},
		{Input: json.RawMessage(`{"bad":`)},
		{Input: json.RawMessage(`1`), RetryOfTaskID: "x#1", RetryAfterAttemptID: "x#1", RetryAfterAttempt: 1, RetryBackoffSeconds: 1.5e-7},
	} {
		checkActivityTaskData(t, at)
	}
}

func FuzzActivityTaskData(f *testing.F) {
	f.Add("w", "r", "steps[0]", "r:steps[0]", 1, "p", "echo", []byte(`{"a":1}`), int64(0), int64(7))
	f.Add("<&>", "\u2028", "\xff", "", -1, "", "", []byte(" [ 1 , \"<\" ] "), int64(-3), int64(0))
	f.Fuzz(func(t *testing.T, wf, run, step, exec string, attempt int, plugin, activity string, input []byte, timeout, hb int64) {
		checkActivityTaskData(t, activityTask{WorkflowID: wf, RunID: run, Step: step, ExecID: exec, Attempt: attempt,
			Plugin: plugin, Activity: activity, Input: input, TimeoutMS: timeout, HeartbeatMS: hb})
	})
}
