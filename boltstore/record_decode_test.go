package boltstore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	bolt "go.etcd.io/bbolt"
)

// checkDecodeRun: decodeRunJSON gives json.Unmarshal's run, or an error where it gives one.
func checkDecodeRun(t *testing.T, b []byte) {
	t.Helper()
	var got, want history.Run
	err := decodeRunJSON(b, &got, sharedStrings{})
	wantErr := json.Unmarshal(b, &want)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", b, err, wantErr)
	}
	if err != nil {
		return
	}
	for _, tt := range [][2]*time.Time{{&got.StartedAt, &want.StartedAt}, {&got.ClosedAt, &want.ClosedAt}} {
		if !tt[0].Equal(*tt[1]) || tt[0].String() != tt[1].String() {
			t.Fatalf("%q: time %v, json.Unmarshal's %v", b, *tt[0], *tt[1])
		}
		*tt[0], *tt[1] = time.Time{}, time.Time{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", b, got, want)
	}
}

// checkDecodeTask: decodeTaskJSON gives json.Unmarshal's task, or an error where it gives one.
func checkDecodeTask(t *testing.T, b []byte) {
	t.Helper()
	var got, want history.Task
	err := decodeTaskJSON(b, &got)
	wantErr := json.Unmarshal(b, &want)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", b, err, wantErr)
	}
	if err != nil {
		return
	}
	if !got.AvailableAt.Equal(want.AvailableAt) || got.AvailableAt.String() != want.AvailableAt.String() {
		t.Fatalf("%q: time %v, json.Unmarshal's %v", b, got.AvailableAt, want.AvailableAt)
	}
	got.AvailableAt, want.AvailableAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", b, got, want)
	}
}

// decodeRunSeeds: appendRunJSON's layout, and near misses of it that json.Unmarshal reads
// differently or refuses.
var decodeRunSeeds = []string{
	`{"workflow_id":"wf","run_id":"r1","name":"w","status":"running","spec_file":"a.wend.yaml","spec_sha256":"ab","started_at":"2026-12-01T10:00:00.123456789Z"}`,
	`{"workflow_id":"wf","run_id":"r1","name":"w","status":"failed","closed_reason":"timed_out","spec_file":"","spec_sha256":"","parent_run_id":"p","parent_step":"steps[2]","started_at":"2026-12-01T15:30:00+05:30","closed_at":"2026-12-01T11:00:00Z"}`,
	`{"workflow_id":"é☃","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"0001-01-01T00:00:00Z"}`,
	"{\"workflow_id\":\"\xff\",\"run_id\":\"r\",\"name\":\"\",\"status\":\"\",\"spec_file\":\"\",\"spec_sha256\":\"\",\"started_at\":\"2026-12-01T10:00:00Z\"}",
	`{"workflow_id":"a\"b","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z"}`,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z","search":{"a":1.5}}`,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z","last_seq":7}`,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-13-01T10:00:00Z"}`,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"bad"}`,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":null}`,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z"} `,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z"`,
	`{"run_id":"r","workflow_id":"wf","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z"}`,
	`{"workflow_id":"wf","Run_ID":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z"}`,
	`{"workflow_id":"wf","run_id":"r","name":"","status":"","spec_file":"","spec_sha256":"","started_at":"2026-12-01T10:00:00Z","closed_at":""}`,
	``, `{`, `[]`, `null`,
}

// decodeTaskSeeds: appendTaskJSON's layout, and near misses of it.
var decodeTaskSeeds = []string{
	`{"id":"r/t/1","run_id":"r","kind":"timer","available_at":"2026-12-04T10:00:00.000000005Z","data":{"run_id":"r","step":"steps[1]","timer_id":"t"}}`,
	`{"id":"r/a/1","run_id":"r","kind":"activity","available_at":"2026-12-01T10:00:00Z","data":{"step":"s1","input":{"i":[1,2]}},"dispatched":true}`,
	`{"id":"r/a/1","run_id":"r","kind":"activity","available_at":"2026-12-01T10:00:00Z","dispatched":true}`,
	`{"id":"r","run_id":"r","kind":"","available_at":"2026-12-01T09:00:00-01:00"}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"a":{"b":1,"dispatched":true}}}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"a":1},"dispatched":false}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"a":1} ,"dispatched":true}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"a":1},"dispatched":true,"dispatched":true}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":"<b>"}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"a":}}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"a":1}}}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"a":1}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{}}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":null}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z",,"dispatched":true}`,
	`{"id":"r","run_id":"r","kind":"x\n","available_at":"2026-12-01T10:00:00Z"}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","dispatched":true}}`,
	`{"id":"r","run_id":"r","kind":"x","available_at":"2026-12-01T10:00:00Z","data":{"x":"}","dispatched":true}`,
	``, `{`, `[]`, `null`,
}

func TestDecodeRecordsMatchUnmarshal(t *testing.T) {
	for _, s := range decodeRunSeeds {
		checkDecodeRun(t, []byte(s))
	}
	for _, s := range decodeTaskSeeds {
		checkDecodeTask(t, []byte(s))
	}
}

// What appendRunJSON and appendTaskJSON write is read by hand, and as json.Unmarshal reads it.
func TestDecodeRecordsReadTheirEncodersByHand(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	zone := time.FixedZone("x", 5*3600+30*60)
	for _, r := range []history.Run{
		{WorkflowID: "wf", RunID: "r1", Name: "w", Status: history.StatusRunning, SpecFile: "a.wend.yaml", SpecSHA256: "ab12", StartedAt: at},
		{WorkflowID: "é", RunID: "r1", Status: history.StatusFailed, ClosedReason: history.ClosedTimedOut,
			ParentRunID: "p", ParentStep: "steps[2]", StartedAt: at.In(zone), ClosedAt: at.Add(time.Hour)},
	} {
		b, ok := appendRunJSON(nil, r)
		if !ok {
			t.Fatalf("%+v: not encoded", r)
		}
		var got history.Run
		if !runLayout(b, &got, nil) {
			t.Fatalf("%s: not read by hand", b)
		}
		checkDecodeRun(t, b)
	}
	for _, task := range []history.Task{
		{ID: "r/t/1", RunID: "r", Kind: history.TaskTimer, AvailableAt: at.Add(72 * time.Hour), Data: json.RawMessage(`{"run_id":"r","step":"steps[1]"}`)},
		{ID: "r/a/1", RunID: "r", Kind: history.TaskActivity, AvailableAt: at.In(zone), Data: json.RawMessage(`{"step":"s1","input":{"i":1}}`), Dispatched: true},
		{ID: "r/w/1", RunID: "r", Kind: history.TaskWait, AvailableAt: at, Dispatched: true},
		{ID: "r/w/2", RunID: "r", Kind: history.TaskWait, AvailableAt: at},
	} {
		b, ok := appendTaskJSON(nil, task)
		if !ok {
			t.Fatalf("%+v: not encoded", task)
		}
		var got history.Task
		if !taskLayout(b, &got) {
			t.Fatalf("%s: not read by hand", b)
		}
		checkDecodeTask(t, b)
	}
}

func FuzzDecodeRunRecord(f *testing.F) {
	for _, s := range decodeRunSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeRun)
}

func FuzzDecodeTask(f *testing.F) {
	for _, s := range decodeTaskSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeTask)
}

// BenchmarkDecodeRecords prices reading one waiting run's record and its timer's task, as a
// start does for every open run.
func BenchmarkDecodeRecords(b *testing.B) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	run, _ := appendRunJSON(nil, history.Run{WorkflowID: "o4711", RunID: "01KBQ3Z7M2V8R6N4X1C9TAEJDH", Name: "order",
		Status: history.StatusRunning, SpecFile: "/srv/flows/order.wend.yaml", SpecSHA256: "9f2c1b7e4a5d6c8b0e3f1a2b4c6d8e0f9f2c1b7e4a5d6c8b0e3f1a2b4c6d8e0f", StartedAt: at})
	task, _ := appendTaskJSON(nil, history.Task{ID: "01KBQ3Z7M2V8R6N4X1C9TAEJDH/timer/shipped", RunID: "01KBQ3Z7M2V8R6N4X1C9TAEJDH",
		Kind: history.TaskTimer, AvailableAt: at.Add(72 * time.Hour),
		Data: json.RawMessage(`{"run_id":"01KBQ3Z7M2V8R6N4X1C9TAEJDH","step":"steps[1]","timer_id":"steps[1]/timeout"}`)})
	b.Run("by-hand", func(b *testing.B) {
		for b.Loop() {
			var r history.Run
			var t history.Task
			if decodeRunJSON(run, &r, nil) != nil || decodeTaskJSON(task, &t) != nil {
				b.Fatal("decode")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var r history.Run
			var t history.Task
			if json.Unmarshal(run, &r) != nil || json.Unmarshal(task, &t) != nil {
				b.Fatal("decode")
			}
		}
	})
}

// A scan of the run records gives the runs of one workflow one string each for their name,
// status, spec file and hash (what Resume keeps of 100,000 waiting runs), their own ids, and
// the newest first, as before.
func TestRunsScanSharesRepeatedStrings(t *testing.T) {
	s := openTemp(t)
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	const n = purgeScanChunk + 3 // across two of the scan's reads
	for i := range n {
		u := storetest.Started(fmt.Sprintf("wf%d", i), fmt.Sprintf("r%04d", i), at.Add(time.Duration(i%7)*time.Second))
		u.Run.SpecFile, u.Run.SpecSHA256 = "/srv/flows/order.wend.yaml", strings.Repeat("ab", 32)
		commitRun(t, s, u)
	}
	runs, err := s.Runs(history.RunFilter{Status: history.StatusRunning})
	must(t, err)
	if len(runs) != n || cap(runs) != n {
		t.Fatalf("%d runs in room for %d, want %d made to size from the counts", len(runs), cap(runs), n)
	}
	must(t, s.view("count", func(tx *bolt.Tx) error {
		if got := runsCounted(tx, history.StatusCompleted); got != 0 {
			t.Errorf("%d completed runs counted, want 0", got)
		}
		if got := runsCounted(tx, ""); got != n {
			t.Errorf("%d runs counted, want %d", got, n)
		}
		return nil
	}))
	if !slices.IsSortedFunc(runs, func(a, b history.Run) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.RunID, a.RunID)
	}) {
		t.Fatal("runs not newest first")
	}
	first := runs[0]
	for _, r := range runs[1:] {
		for _, f := range [][2]string{{r.Name, first.Name}, {r.Status, first.Status}, {r.SpecFile, first.SpecFile}, {r.SpecSHA256, first.SpecSHA256}} {
			if f[0] != f[1] || unsafe.StringData(f[0]) != unsafe.StringData(f[1]) {
				t.Fatalf("run %s: %q is not the string run %s holds", r.RunID, f[0], first.RunID)
			}
		}
		if unsafe.StringData(r.RunID) == unsafe.StringData(first.RunID) {
			t.Fatalf("run %s shares its id's string", r.RunID)
		}
	}
}
