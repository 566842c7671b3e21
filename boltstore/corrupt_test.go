package boltstore

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestEventChecksum: a byte flipped inside a stored event (rot bbolt does not see: it checks
// only meta pages) fails Events with an error naming the run and seq, and Check reports it.
func TestEventChecksum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	commitRun(t, s, storetest.Next(u.Run, history.ActivityCompleted, 4))
	must(t, s.Close())

	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		b, key := eventsOf(t, tx, "r1")
		v := append([]byte(nil), b.Get(key(3))...)
		v[len(v)/2] ^= 0x01
		return b.Put(key(3), v)
	}))
	must(t, db.Close())

	s = openAt(t, path, Options{})
	_, err = s.Events("r1", 0)
	if !errors.Is(err, history.ErrChecksum) || !strings.Contains(err.Error(), "run r1: event 3:") {
		t.Fatalf("Events over a flipped byte: %v; want a checksum error naming run r1, event 3", err)
	}
	if evs, err := s.Events("r1", 3); err != nil || len(evs) != 2 {
		t.Fatalf("events after the bad one: %d, %v", len(evs), err)
	}
	ps, err := s.Check()
	must(t, err)
	if len(ps) != 1 || !strings.Contains(ps[0], "run r1: event 3: event checksum mismatch") {
		t.Fatalf("check: %q", ps)
	}
}

// TestCheckFindsHistoryProblems: Check runs history.Check on every run and checks the index.
func TestCheckFindsHistoryProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	done := storetest.Next(u.Run, history.WorkflowCompleted, 1) // status still running
	commitRun(t, s, done)
	must(t, s.Close())

	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWorkflows).Delete(workflowKey("wf", "r1"))
	}))
	must(t, db.Close())

	s = openAt(t, path, Options{})
	ps, err := s.Check()
	must(t, err)
	want := []string{"does not agree with the history", "run record: status running (), its terminal WorkflowCompleted says completed",
		"run record: closed_at is 0001-01-01T00:00:00Z", "missing from the workflow index", `workflow index: "wf" counts 1 run(s), none indexed`}
	if len(ps) != len(want) {
		t.Fatalf("check: %q", ps)
	}
	for i, w := range want {
		if !strings.Contains(ps[i], w) {
			t.Errorf("problem %d = %q, want it to mention %q", i, ps[i], w)
		}
	}
}

// TestCheckFindsLostTail: a closed run whose terminal event was lost (the tail of its history)
// is reported: its record says closed, its history does not. (The record holds no last seq, so
// the lost tail of an open run looks like a run that has not gone on yet: bbolt commits a run's
// record and events together, and only damage bbolt's checks miss could lose the one alone.)
func TestCheckFindsLostTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	next := storetest.Next(u.Run, history.WorkflowFailed, 2)
	next.Events[0].Type = history.ActivityCompleted
	next.Run.Status, next.Run.ClosedReason = history.ClosedBy(next.Events[1])
	next.Run.ClosedAt = next.Events[1].Time
	commitRun(t, s, next)
	must(t, s.Close())

	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		b, key := eventsOf(t, tx, "r1")
		return b.Delete(key(3))
	}))
	must(t, db.Close())

	s = openAt(t, path, Options{})
	ps, err := s.Check()
	must(t, err)
	if !slices.ContainsFunc(ps, func(p string) bool {
		return strings.Contains(p, `run status "failed" does not agree with the history (terminal event: false)`)
	}) {
		t.Fatalf("check: %q", ps)
	}
}
