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

func TestOnlyLastSeqDiffers(t *testing.T) {
	rec := func(r history.Run) []byte {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := history.Run{WorkflowID: "w", RunID: "r", Status: history.StatusRunning, StartedAt: time.Unix(5, 0).UTC(), LastSeq: 3}
	with := func(f func(*history.Run)) []byte { r := base; f(&r); return rec(r) }
	for _, tc := range []struct {
		name     string
		old, new []byte
		want     bool
	}{
		{"seq only", rec(base), with(func(r *history.Run) { r.LastSeq = 40 }), true},
		{"identical", rec(base), rec(base), true},
		{"status", rec(base), with(func(r *history.Run) { r.Status = history.StatusCompleted; r.LastSeq = 9 }), false},
		{"closed_at added", rec(base), with(func(r *history.Run) { r.ClosedAt = time.Unix(9, 0).UTC() }), false},
		{"id holding the field", with(func(r *history.Run) { r.Name = `x,"last_seq":1` }), with(func(r *history.Run) { r.Name = `x,"last_seq":1`; r.LastSeq = 4 }), true},
		{"garbage", []byte(`{}`), rec(base), false},
		{"a field after last_seq changed", []byte(`{"a":1,"last_seq":3,"z":1}`), []byte(`{"a":1,"last_seq":4,"z":2}`), false},
		{"a field after last_seq kept", []byte(`{"a":1,"last_seq":3,"z":1}`), []byte(`{"a":1,"last_seq":40,"z":1}`), true},
	} {
		if got := onlyLastSeqDiffers(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: onlyLastSeqDiffers(%s, %s) = %v, want %v", tc.name, tc.old, tc.new, got, tc.want)
		}
	}
}

// A commit that only appends events leaves the stored record as it was; reads still report
// the last seq from the events. A commit that changes the record rewrites it.
func TestRecordRewrittenOnlyWhenChanged(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	at := time.Unix(100, 0).UTC()
	u := storetest.Started("wf", "r1", at)
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	raw := func() history.Run {
		var r history.Run
		if err := s.db.View(func(tx *bolt.Tx) error {
			return json.Unmarshal(tx.Bucket(bucketRuns).Get([]byte("r1"))[frameHeader:], &r)
		}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	u = storetest.Next(u.Run, history.ActivityScheduled, 3)
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	if got := raw().LastSeq; got != 1 {
		t.Fatalf("stored last_seq %d after an append-only commit, want the record untouched (1)", got)
	}
	r, err := s.Run("r1")
	if err != nil || r.LastSeq != 4 {
		t.Fatalf("Run: last seq %d (%v), want 4", r.LastSeq, err)
	}
	list, err := s.Runs(history.RunFilter{})
	if err != nil || len(list) != 1 || list[0].LastSeq != 4 {
		t.Fatalf("Runs: %+v (%v), want one run at seq 4", list, err)
	}
	u = storetest.Next(u.Run, history.WorkflowCompleted, 1)
	u.Run.Status, u.Run.ClosedReason = history.ClosedBy(u.Events[0])
	u.Run.ClosedAt = u.Events[0].Time
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	if got := raw(); got.Status != history.StatusCompleted || got.LastSeq != 5 {
		t.Fatalf("stored record %+v after a status change, want completed at seq 5", got)
	}
	if problems, err := s.Check(); err != nil || len(problems) != 0 {
		t.Fatalf("check: %v %v", problems, err)
	}
}
