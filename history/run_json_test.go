package history

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func checkRunJSON(t *testing.T, r Run) {
	t.Helper()
	want, wantErr := json.Marshal(r)
	got, err := r.AppendJSON(nil)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: AppendJSON error %v, json.Marshal error %v", r, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%+v:\nAppendJSON   %s\njson.Marshal %s", r, got, want)
	}
}

func TestRunAppendJSON(t *testing.T) {
	at := time.Date(2026, 11, 29, 21, 0, 0, 123456789, time.UTC)
	for _, r := range []Run{
		{},
		{WorkflowID: "order-42", RunID: "r1", Name: "order", Status: StatusRunning, SpecFile: "a.wend.yaml", SpecSHA256: "ab", StartedAt: at, LastSeq: 7},
		{WorkflowID: "w", RunID: "r", Status: StatusFailed, ClosedReason: ClosedTimedOut, ParentRunID: "p", ParentStep: "steps[0]", StartedAt: at, ClosedAt: at.Add(time.Hour), LastSeq: 1 << 60},
		{WorkflowID: `quote" back\ <tag> & amp`, RunID: "ünïcode", Name: "tab\tnl\n", Status: "\u2028\u2029", SpecFile: "bad\xffutf8", StartedAt: at.In(time.FixedZone("x", 3600))},
		{WorkflowID: "w", StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, // json.Marshal refuses
		{WorkflowID: "w", StartedAt: at, ClosedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		checkRunJSON(t, r)
	}
}

func FuzzRunAppendJSON(f *testing.F) {
	f.Add("order-42", "r1", "order", "running", "", "a.wend.yaml", int64(0), int64(5), uint64(3))
	f.Add("a\"<>&\\", "\x00\xff", "\u2028", "x", "y", "z", int64(-62135596800), int64(0), uint64(0))
	f.Fuzz(func(t *testing.T, wf, run, name, status, reason, file string, started, closed int64, seq uint64) {
		r := Run{WorkflowID: wf, RunID: run, Name: name, Status: status, ClosedReason: reason, SpecFile: file,
			SpecSHA256: file, ParentRunID: reason, ParentStep: name, StartedAt: time.Unix(started, 0).UTC(), LastSeq: seq}
		if closed != 0 {
			r.ClosedAt = time.Unix(0, closed)
		}
		checkRunJSON(t, r)
	})
}

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
