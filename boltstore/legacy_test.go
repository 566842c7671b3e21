package boltstore

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestLegacyRecordsReadAndUpgraded: a database written before records had checksums (run and
// task records bare JSON, index entries {1} and no head) reads as before and checks clean; the
// next commits frame what they write, and the workflow's index gets its head (issue 12 item 11).
func TestLegacyRecordsReadAndUpgraded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	ctx := context.Background()
	u1, u2 := storetest.Started("wf", "r1", t0), storetest.Started("wf", "r2", t0)
	task := history.Task{ID: "r1/timer/t", RunID: "r1", Kind: history.TaskTimer, AvailableAt: t0}
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u1, u2}, PutTasks: []history.Task{task}}))
	must(t, s.Close())

	// Rewrite every record as the code before checksums stored it.
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		for _, r := range []history.Run{u1.Run, u2.Run} {
			b, _ := json.Marshal(r)
			if err := tx.Bucket(bucketRuns).Put([]byte(r.RunID), b); err != nil {
				return err
			}
			if err := tx.Bucket(bucketWorkflows).Put(workflowKey("wf", r.RunID), legacyIndexValue); err != nil {
				return err
			}
		}
		b, _ := json.Marshal(task)
		if err := tx.Bucket(bucketTasks).Put([]byte(task.ID), b); err != nil {
			return err
		}
		return tx.Bucket(bucketWorkflows).Delete(workflowPrefix("wf"))
	}))
	must(t, db.Close())

	s = openAt(t, path, Options{})
	runs, err := s.Runs(history.RunFilter{WorkflowID: "wf"})
	if err != nil || len(runs) != 2 {
		t.Fatalf("legacy index: %+v %v", runs, err)
	}
	tasks, err := s.Tasks()
	if err != nil || len(tasks) != 1 || tasks[0].RunID != "r1" {
		t.Fatalf("legacy tasks: %+v %v", tasks, err)
	}
	if ps, err := s.Check(); err != nil || len(ps) != 0 {
		t.Fatalf("check of a legacy database: %q %v", ps, err)
	}

	// r1 appends only events: its legacy record is framed all the same; a third run of the
	// workflow frames the index and gives it a head counting all three.
	next := storetest.Next(u1.Run, history.TimerFired, 1)
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{next, storetest.Started("wf", "r3", t0)}, PutTasks: []history.Task{task}}))
	must(t, s.readTx(func(tx *bolt.Tx) error {
		for _, kv := range [][2][]byte{
			{[]byte("r1"), tx.Bucket(bucketRuns).Get([]byte("r1"))},
			{[]byte(task.ID), tx.Bucket(bucketTasks).Get([]byte(task.ID))},
		} {
			if _, legacy, err := unframe(kv[0], kv[1]); legacy || err != nil {
				t.Errorf("%s after a write: legacy %v, %v", kv[0], legacy, err)
			}
		}
		for _, id := range []string{"r1", "r2", "r3"} {
			k := workflowKey("wf", id)
			if legacy, err := readIndexEntry(k, tx.Bucket(bucketWorkflows).Get(k)); legacy || err != nil {
				t.Errorf("index entry of %s: legacy %v, %v", id, legacy, err)
			}
		}
		n, err := readIndexHead(workflowPrefix("wf"), tx.Bucket(bucketWorkflows).Get(workflowPrefix("wf")))
		if err != nil || n != 3 {
			t.Errorf("index head: %d %v, want 3", n, err)
		}
		return nil
	}))
	if ps, err := s.Check(); err != nil || len(ps) != 0 {
		t.Fatalf("check after the upgrade: %q %v", ps, err)
	}
	if runs, err := s.Runs(history.RunFilter{WorkflowID: "wf"}); err != nil || len(runs) != 3 {
		t.Fatalf("runs after the upgrade: %+v %v", runs, err)
	}
}
