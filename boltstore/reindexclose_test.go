package boltstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// sameWorkflowPrefix says two records name the same workflow exactly when they do, whatever the
// ids hold: quotes, backslashes, one id a prefix of the other, bytes json.Marshal escapes.
func FuzzSameWorkflowPrefix(f *testing.F) {
	for _, ids := range [][2]string{
		{"order-42", "order-42"},
		{"a", "ab"},
		{"ab", "a"},
		{`a"`, "a"},
		{`a\`, `a\\`},
		{`a","run_id":"x`, "a"},
		{`a\",`, `a\"`},
		{"<&>", "<&>"},
		{"<", `\u003c`},
		{"é\u2028", "é\u2028"},
		{"\xff", "\xfe"},
	} {
		f.Add(ids[0], ids[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		at := time.Unix(100, 0).UTC()
		old, err := encodeRun(history.Run{WorkflowID: a, RunID: "r", Status: history.StatusRunning, StartedAt: at})
		if err != nil {
			t.Skip()
		}
		rec, err := encodeRun(history.Run{WorkflowID: b, RunID: "r", Status: history.StatusCompleted, StartedAt: at, ClosedAt: at})
		if err != nil {
			t.Skip()
		}
		// Compared as stored: json.Marshal turns invalid UTF-8 into U+FFFD, so two ids can be
		// stored alike.
		want := storedWorkflowID(t, old) == storedWorkflowID(t, rec)
		if got := sameWorkflowPrefix(old, rec); got != want {
			t.Errorf("sameWorkflowPrefix(%q, %q) = %v, want %v", old, rec, got, want)
		}
	})
}

func storedWorkflowID(t *testing.T, rec []byte) string {
	var r history.Run
	if err := json.Unmarshal(rec, &r); err != nil {
		t.Fatal(err)
	}
	return r.WorkflowID
}

// TestSameWorkflowPrefixOnlyForItsOwnEncoding: a record whose workflow id is not its first
// field (another encoder's) is never matched by its opening, so reindex decodes it.
func TestSameWorkflowPrefixOnlyForItsOwnEncoding(t *testing.T) {
	rec, err := encodeRun(history.Run{WorkflowID: "wf", RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{
		`{"run_id":"r","workflow_id":"wf"}`,
		`{"workflow_id" :"wf","run_id":"r"}`,
		`{"workflow_id":"wf"}`,
		`{"workflow_id":"wf`,
		``,
	} {
		if sameWorkflowPrefix([]byte(old), rec) {
			t.Errorf("sameWorkflowPrefix(%s, %s) = true, want false", old, rec)
		}
	}
	if sameWorkflowPrefix(rec, []byte(`{"run_id":"r","workflow_id":"wf"}`)) {
		t.Error("matched a commit's record that does not start with its workflow id")
	}
}

// TestRunCloseReindexAllocs: closing a run rewrites its record, and reindex then only has to
// learn that the workflow id is the one indexed. It used to decode the old record whole with
// encoding/json for that, in the writer, for each of the 100,000 timers' runs (seven
// allocations against two now); the id is now read from the record's opening.
func TestRunCloseReindexAllocs(t *testing.T) {
	s := openTemp(t)
	at := time.Unix(100, 0).UTC()
	u := storetest.Started("order-42", "r1", at)
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	u = storetest.Next(u.Run, history.WorkflowCompleted, 1)
	u.Run.Status, u.Run.ClosedReason = history.ClosedBy(u.Events[0])
	u.Run.ClosedAt = u.Events[0].Time
	p, err := prepare(history.Commit{Runs: []history.RunUpdate{u}})
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.settle())
	var allocs float64
	if err := s.db.View(func(tx *bolt.Tx) error {
		wfs, old := tx.Bucket(bucketWorkflows), tx.Bucket(bucketRuns).Get([]byte("r1"))
		allocs = testing.AllocsPerRun(100, func() {
			if err := reindex(wfs, old, p.runs[0]); err != nil {
				t.Fatal(err)
			}
		})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if allocs > 2 {
		t.Errorf("reindex of a closing run: %v allocations, want at most 2 (bbolt's lookup of the index entry)", allocs)
	}
}

// TestReindexShortRecordNoPanic: a commit's record shorter than a frame (prepare never makes
// one; a log record replayed at open is only as sound as its checksum) is not sliced past its
// end: reindex decodes the old record instead.
func TestReindexShortRecordNoPanic(t *testing.T) {
	s := openTemp(t)
	u := storetest.Started("wf", "r1", time.Unix(100, 0).UTC())
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	p, err := prepare(history.Commit{Runs: []history.RunUpdate{u}})
	if err != nil {
		t.Fatal(err)
	}
	r := p.runs[0]
	r.record = []byte{frameV1}
	must(t, s.settle())
	if err := s.db.View(func(tx *bolt.Tx) error {
		return reindex(tx.Bucket(bucketWorkflows), tx.Bucket(bucketRuns).Get([]byte("r1")), r)
	}); err != nil {
		t.Fatalf("reindex: %v", err)
	}
}
