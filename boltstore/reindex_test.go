package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestRecordHoldsNoLastSeq: the stored run record leaves last_seq out (it is the seq of
// the run's last event, read from there), so it has no rule of its own to follow: the record
// decodes to the Run committed but for LastSeq, and a Run ever given a new field is stored with it.
func TestRecordHoldsNoLastSeq(t *testing.T) {
	at := time.Date(2026, 11, 29, 21, 0, 0, 123456789, time.UTC)
	for _, r := range []history.Run{
		{},
		{WorkflowID: "order-42", RunID: "r1", Name: "order", Status: history.StatusRunning, SpecFile: "a.wend.yaml", SpecSHA256: "ab", StartedAt: at, LastSeq: 7},
		{WorkflowID: `a,"last_seq":1`, RunID: "r", Status: history.StatusFailed, ClosedReason: history.ClosedTimedOut, ParentRunID: "p", ParentStep: "steps[0]", StartedAt: at, ClosedAt: at.Add(time.Hour), LastSeq: 1 << 60},
		{WorkflowID: "w", RunID: "s", StartedAt: at, LastSeq: 2, Search: map[string]any{"customer": "ann", "amount": 12.5, "vip": true},
			SearchProblems: map[string]string{"paid_at": "search field paid_at: got a number, want a time"}},
	} {
		b, err := encodeRun(r)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		if _, ok := fields["last_seq"]; ok {
			t.Errorf("%s: the stored record holds last_seq", b)
		}
		whole, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(whole, &all); err != nil {
			t.Fatal(err)
		}
		if len(all) != len(fields)+1 {
			t.Errorf("%s: the stored record has %d fields, history.Run %d: only last_seq may be left out", b, len(fields), len(all))
		}
		var got history.Run
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := r
		want.LastSeq = 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decoded %+v, want %+v", got, want)
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
	raw := func() []byte {
		var v []byte
		if err := s.readTx(func(tx *bolt.Tx) error {
			v = bytes.Clone(tx.Bucket(bucketRuns).Get([]byte("r1")))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	decoded := func() history.Run {
		var r history.Run
		if err := json.Unmarshal(raw()[frameHeader:], &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := raw()
	u = storetest.Next(u.Run, history.ActivityScheduled, 3)
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	if got := raw(); !bytes.Equal(got, first) {
		t.Fatalf("stored record %q after an append-only commit, want it untouched (%q)", got, first)
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
	if got := decoded(); got.Status != history.StatusCompleted || got.LastSeq != 0 {
		t.Fatalf("stored record %+v after a status change, want completed, with no last seq", got)
	}
	if r, err := s.Run("r1"); err != nil || r.LastSeq != 5 {
		t.Fatalf("Run: last seq %d (%v), want 5", r.LastSeq, err)
	}
	if problems, err := s.Check(); err != nil || len(problems) != 0 {
		t.Fatalf("check: %v %v", problems, err)
	}
}
