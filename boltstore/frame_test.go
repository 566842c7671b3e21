package boltstore

import (
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history/storetest"
)

// TestUnframedRecordIsDamage: every record is framed with its checksum; a bare JSON record or
// index entry (no frame) is damage, reported by reads and by Check, never read unverified.
func TestUnframedRecordIsDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	commitRun(t, s, storetest.Started("wf", "r1", t0))
	must(t, s.Close())

	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketRuns).Put([]byte("r1"), []byte(`{"workflow_id":"wf","run_id":"r1"}`)); err != nil {
			return err
		}
		return tx.Bucket(bucketWorkflows).Put(workflowKey("wf", "r1"), []byte{1})
	}))
	must(t, db.Close())

	s = openAt(t, path, Options{})
	if _, err := s.Run("r1"); !errors.Is(err, errFrame) {
		t.Errorf("Run of a bare JSON record = %v, want a checksum error", err)
	}
	ps, err := s.Check()
	must(t, err)
	if len(ps) < 2 {
		t.Errorf("Check = %q, want the run record and the index entry reported", ps)
	}
}
