package boltstore

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// schemaOneFixture is a database written by wend's store before schema 2 (every run's events
// a bucket of their own), by fixtureCommits, gzipped.
const schemaOneFixture = "testdata/schema1.db.gz"

// fixtureCommits are the commits of the schema 1 fixture: runs of a few events (which the
// upgrade moves into the shared bucket), one of many (which keeps a bucket of its own), a
// closed run and tasks. It is deterministic, so a test rebuilds the histories the fixture holds.
func fixtureCommits() []history.Commit {
	var cs []history.Commit
	for i := range 12 {
		id := fmt.Sprintf("run-%02d", i)
		u := storetest.Started(fmt.Sprintf("wf-%d", i%3), id, t0)
		task := history.Task{ID: id + "/timer", RunID: id, Kind: history.TaskTimer, AvailableAt: t0,
			Data: json.RawMessage(`{"run_id":"` + id + `"}`)}
		cs = append(cs, history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{task}})
		n := 1 + i%4
		if i == 5 {
			n = 400 // past ownBucketBytes
		}
		next := storetest.Next(u.Run, history.ActivityCompleted, n)
		cs = append(cs, history.Commit{Runs: []history.RunUpdate{next}})
		if i == 7 {
			done := storetest.Next(next.Run, history.WorkflowCompleted, 1)
			done.Run.Status, done.Run.ClosedReason = history.ClosedBy(done.Events[0])
			done.Run.ClosedAt = done.Events[0].Time
			cs = append(cs, history.Commit{Runs: []history.RunUpdate{done}, DeleteTasks: []string{task.ID}})
		}
	}
	return cs
}

// fixtureHistories is every run's events as fixtureCommits leave them.
func fixtureHistories() map[string][]history.Event {
	out := map[string][]history.Event{}
	for _, c := range fixtureCommits() {
		for _, u := range c.Runs {
			out[u.Run.RunID] = append(out[u.Run.RunID], u.Events...)
		}
	}
	return out
}

// unpackFixture writes the schema 1 fixture to a database file in a test folder.
func unpackFixture(t *testing.T) string {
	t.Helper()
	f, err := os.Open(schemaOneFixture)
	must(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	must(t, err)
	path := filepath.Join(t.TempDir(), "wend.db")
	out, err := os.Create(path)
	must(t, err)
	_, err = io.Copy(out, zr)
	must(t, err)
	must(t, out.Close())
	return path
}

// sameHistories fails t unless every run of the fixture reads as fixtureCommits wrote it, and
// Check finds nothing.
func sameHistories(t *testing.T, s *Store) {
	t.Helper()
	for id, want := range fixtureHistories() {
		got, err := s.Events(id, 0)
		must(t, err)
		if !reflect.DeepEqual(eventsJSON(t, got), eventsJSON(t, want)) {
			t.Fatalf("run %s: %d events read, %d written, or other ones", id, len(got), len(want))
		}
		r, err := s.Run(id)
		must(t, err)
		if r.LastSeq != uint64(len(want)) {
			t.Fatalf("run %s: last seq %d, want %d", id, r.LastSeq, len(want))
		}
	}
	ps, err := s.Check()
	must(t, err)
	if len(ps) > 0 {
		t.Fatalf("check: %q", ps)
	}
}

func eventsJSON(t *testing.T, evs []history.Event) string {
	b, err := json.Marshal(evs)
	must(t, err)
	return string(b)
}

// schemaOf reads the file's schema version and whether its upgrade is under way.
func schemaOf(t *testing.T, path string) (schema string, upgrading bool) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	must(t, err)
	defer db.Close()
	must(t, db.View(func(tx *bolt.Tx) error {
		schema = string(tx.Bucket(bucketMeta).Get(keySchema))
		upgrading = tx.Bucket(bucketMeta).Get(keyUpgradeFrom) != nil
		return nil
	}))
	return schema, upgrading
}

// A file of schema 1 is read as it is by a store opened for reading (which writes nothing),
// and upgraded by one opened for writing: every history reads as written, the short ones moved
// into the shared bucket, the long one left in its own; the store goes on committing.
func TestOpenSchemaOneFile(t *testing.T) {
	path := unpackFixture(t)
	if v, _ := schemaOf(t, path); v != schemaOwnOnly {
		t.Fatalf("the fixture is of schema %q", v)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	must(t, err)
	sameHistories(t, ro)
	must(t, ro.Close())
	if v, _ := schemaOf(t, path); v != schemaOwnOnly {
		t.Fatalf("a store opened for reading changed the schema to %q", v)
	}

	var seen []UpgradeProgress
	s, err := Open(path, Options{UpgradeProgress: func(p UpgradeProgress) { seen = append(seen, p) }})
	must(t, err)
	sameHistories(t, s)
	if len(seen) == 0 || seen[len(seen)-1].Seen != 12 || seen[len(seen)-1].Total != 12 || seen[len(seen)-1].Moved != 11 {
		t.Fatalf("progress %+v; want the last at 12 of 12 runs seen, 11 moved", seen)
	}
	must(t, s.view("layout", func(tx *bolt.Tx) error {
		for id := range fixtureHistories() {
			re, err := findEvents(tx, []byte(id))
			must(t, err)
			if re.own != (id == "run-05") {
				t.Errorf("run %s: in a bucket of its own %v", id, re.own)
			}
		}
		return nil
	}))
	// The store goes on: a short run appended to, a new run.
	r, err := s.Run("run-03")
	must(t, err)
	commitRun(t, s, storetest.Next(r, history.ActivityCompleted, 2))
	commitRun(t, s, storetest.Started("wf-new", "run-new", t0))
	must(t, s.Close())
	if v, up := schemaOf(t, path); v != schemaVersion || up {
		t.Fatalf("after the upgrade: schema %q, upgrading %v", v, up)
	}
	s = openAt(t, path, Options{})
	evs, err := s.Events("run-03", 0)
	must(t, err)
	if len(evs) != len(fixtureHistories()["run-03"])+2 {
		t.Fatalf("run-03 has %d events after the upgrade and a commit", len(evs))
	}
	ps, err := s.Check()
	must(t, err)
	if len(ps) > 0 {
		t.Fatalf("check: %q", ps)
	}
}

// An upgrade cut off between two of its transactions (as a crash there leaves it) leaves a
// file that opens, for reading with every history as written, and for writing, which finishes
// the upgrade.
func TestUpgradeCutOff(t *testing.T) {
	path := unpackFixture(t)
	old := upgradeBatchBytes
	upgradeBatchBytes = 1 // a run a transaction
	defer func() { upgradeBatchBytes = old }()
	errCut := errors.New("cut off")
	n := 0
	testHookUpgrade = func(UpgradeProgress) error {
		if n++; n == 4 {
			return errCut
		}
		return nil
	}
	defer func() { testHookUpgrade = func(UpgradeProgress) error { return nil } }()
	if _, err := Open(path, Options{}); !errors.Is(err, errCut) {
		t.Fatalf("open: %v; want the upgrade cut off", err)
	}
	if v, up := schemaOf(t, path); v != schemaVersion || !up {
		t.Fatalf("cut off: schema %q, upgrading %v; want schema 2 with the upgrade under way", v, up)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	must(t, err)
	sameHistories(t, ro)
	must(t, ro.Close())
	testHookUpgrade = func(UpgradeProgress) error { return nil }
	s, err := Open(path, Options{})
	must(t, err)
	sameHistories(t, s)
	must(t, s.Close())
	if v, up := schemaOf(t, path); v != schemaVersion || up {
		t.Fatalf("after the upgrade: schema %q, upgrading %v", v, up)
	}
}

// A purge of upgraded runs deletes their events from the shared bucket and from their own.
func TestPurgeAfterUpgrade(t *testing.T) {
	path := unpackFixture(t)
	s := openAt(t, path, Options{})
	gone, err := s.PurgeRuns(context.Background(), []string{"run-07"}, nil)
	must(t, err)
	if len(gone) != 1 {
		t.Fatalf("purged %d runs", len(gone))
	}
	if _, err := s.Events("run-07", 0); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("events of the purged run: %v", err)
	}
	must(t, s.view("layout", func(tx *bolt.Tx) error {
		if tx.Bucket(bucketRunSlots).Get([]byte("run-07")) != nil {
			t.Error("the purged run keeps its slot")
		}
		return nil
	}))
	ps, err := s.Check()
	must(t, err)
	if len(ps) > 0 {
		t.Fatalf("check: %q", ps)
	}
}
