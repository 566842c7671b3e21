package boltstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// checkRunRecord holds framedRun to frame(id, json.Marshal(storedRun{Run: r})), its error too.
func checkRunRecord(t *testing.T, r history.Run) {
	t.Helper()
	id := []byte(r.RunID)
	want, werr := json.Marshal(storedRun{Run: r})
	got, gerr := framedRun(id, r)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("run %+v: error %v, json.Marshal's %v", r, gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, frame(id, want)) {
		t.Fatalf("run %+v:\n got %q\nwant %q", r, got[frameHeader:], want)
	}
}

// checkTask holds framedTask to frame(id, json.Marshal(t)), its error too.
func checkTask(t *testing.T, task history.Task) {
	t.Helper()
	id := []byte(task.ID)
	want, werr := json.Marshal(task)
	got, gerr := framedTask(id, task)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("task %+v: error %v, json.Marshal's %v", task, gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, frame(id, want)) {
		t.Fatalf("task %+v:\n got %q\nwant %q", task, got[frameHeader:], want)
	}
}

func TestRunRecordJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	zone := time.FixedZone("x", 5*3600+30*60)
	for _, r := range []history.Run{
		{},
		{WorkflowID: "wf", RunID: "r1", Name: "w", Status: history.StatusRunning, SpecFile: "a.wend.yaml",
			SpecSHA256: "ab12", StartedAt: at, LastSeq: 40},
		{WorkflowID: "wf", RunID: "r1", Status: history.StatusFailed, ClosedReason: history.ClosedTimedOut,
			ParentRunID: "p", ParentStep: "steps[2]", StartedAt: at.In(zone), ClosedAt: at.Add(time.Hour)},
		{WorkflowID: `a "quoted" <id> & é`, RunID: "r\x01\u2028", Name: "\xff", StartedAt: at},
		{RunID: "r", StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},            // a year json.Marshal refuses
		{RunID: "r", StartedAt: at, ClosedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}, // and another
		{RunID: "r", StartedAt: at, ClosedAt: at, Search: map[string]any{"b": "<ann>", "a": 1.5, "c": true},
			SearchProblems: map[string]string{"z": "got a list"}},
	} {
		checkRunRecord(t, r)
	}
}

func TestTaskJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 5, time.UTC)
	for _, task := range []history.Task{
		{},
		{ID: "r/a1/1", RunID: "r", Kind: history.TaskActivity, AvailableAt: at, Data: json.RawMessage(`{"step": "s1", "input": {"i": 1}}`), Dispatched: true},
		{ID: "r/timer/t1", RunID: "r", Kind: history.TaskTimer, AvailableAt: at.In(time.FixedZone("", -3600))},
		{ID: "<&>", RunID: "r", Kind: "x\n", Data: json.RawMessage(`"<b>"`)},
		{ID: "r", Data: json.RawMessage(`{"a":`)},      // invalid data: json.Marshal's error
		{ID: "r", Data: json.RawMessage("\"\u2028\"")}, // escaped by json.Marshal
		{ID: "r", AvailableAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		checkTask(t, task)
	}
}

func FuzzRunRecordJSON(f *testing.F) {
	f.Add("wf", "r1", "w", "running", "", "a.wend.yaml", "ab", "", "", int64(1764583200123456789), int64(0), 0)
	f.Add(`"<&>`, "r\u2028", "\xff", "failed", "timed_out", "", "", "p", "s", int64(-62135596800000000000/1000), int64(5), 3600)
	f.Fuzz(func(t *testing.T, wf, id, name, status, reason, file, sum, parent, pstep string, started, closed int64, offset int) {
		zone := time.FixedZone("", offset%(48*3600))
		r := history.Run{WorkflowID: wf, RunID: id, Name: name, Status: status, ClosedReason: reason, SpecFile: file,
			SpecSHA256: sum, ParentRunID: parent, ParentStep: pstep, StartedAt: time.Unix(0, started).In(zone)}
		if closed != 0 {
			r.ClosedAt = time.Unix(closed, closed%1e9).UTC()
		}
		checkRunRecord(t, r)
	})
}

func FuzzTaskJSON(f *testing.F) {
	f.Add("r/a1/1", "r", "activity", int64(1764583200123456789), []byte(`{"step":"s1"}`), true)
	f.Add("<&>", "\u2029", "\x00", int64(0), []byte("{\"a\" : [1, 2]}"), false)
	f.Add("r", "r", "timer", int64(1<<62), []byte(`{"a":`), false)
	f.Fuzz(func(t *testing.T, id, run, kind string, at int64, data []byte, dispatched bool) {
		checkTask(t, history.Task{ID: id, RunID: run, Kind: history.TaskKind(kind), AvailableAt: time.Unix(at, at%1e9).UTC(),
			Data: data, Dispatched: dispatched})
	})
}
