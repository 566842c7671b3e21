package history

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func checkEventJSON(t *testing.T, e Event) {
	t.Helper()
	want, wantErr := json.Marshal(e)
	got, err := e.AppendJSON([]byte("prefix"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: AppendJSON error %v, json.Marshal error %v", e, err, wantErr)
	}
	if err == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%+v:\nAppendJSON   %s\njson.Marshal %s", e, got, want)
	}
}

func TestEventAppendJSON(t *testing.T) {
	at := time.Date(2026, 11, 29, 21, 0, 0, 5, time.UTC)
	for _, e := range []Event{
		{},
		{Seq: 1, Type: WorkflowStarted, Time: at, Data: json.RawMessage(`{"input":{"a":[1,2]}}`)},
		{Seq: 9, Type: ActivityScheduled, Time: at, Step: "steps[3]", ActivityExecutionID: "x-1", Attempt: 2, Data: json.RawMessage(` { "a" : "b c" } `)},
		{Seq: 2, Type: "odd\"type<", Time: at.In(time.FixedZone("z", -7200)), Attempt: -3},
		{Seq: 3, Type: SignalReceived, Time: at, Data: json.RawMessage(`{"html":"<b>&amp;</b>"}`)},
		{Seq: 4, Type: SignalReceived, Time: at, Data: json.RawMessage("\"line\u2028sep\"")},
		{Seq: 5, Type: SignalReceived, Time: at, Data: json.RawMessage(`{"bad":`)},
		{Seq: 6, Type: SignalReceived, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Seq: 7, Type: SignalReceived, Time: at, Data: json.RawMessage("\"\xff\"")},
	} {
		checkEventJSON(t, e)
	}
}

func FuzzEventAppendJSON(f *testing.F) {
	f.Add(uint64(1), "ActivityScheduled", int64(0), "steps[0]", "x", 1, []byte(`{"a":1}`))
	f.Add(uint64(0), "<&>", int64(-62135596800), "\u2028", "\xff", -1, []byte(" [ 1 , \"<\" ] "))
	f.Fuzz(func(t *testing.T, seq uint64, typ string, sec int64, step, exec string, attempt int, data []byte) {
		checkEventJSON(t, Event{Seq: seq, Type: EventType(typ), Time: time.Unix(sec, 0).UTC(), Step: step,
			ActivityExecutionID: exec, Attempt: attempt, Data: data})
	})
}
