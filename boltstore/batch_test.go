package boltstore

import (
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestBatchesSurviveReopen: a batch's record and run list, written at creation, its record
// rewritten as it goes, are read back after a reopen; deleted batches are gone; a flipped byte
// is an error naming the batch.
func TestBatchesSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	if got, err := s.BatchRecords(); err != nil || len(got) != 0 {
		t.Fatalf("fresh database: %v, %v", got, err)
	}
	if runs, err := s.BatchRuns("a"); err != nil || runs != nil {
		t.Fatalf("runs of no batch: %q, %v", runs, err)
	}
	if err := s.CreateBatch("a", []byte(`{"next":0}`), []byte(`["r1","r2"]`)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBatch("b", []byte(`{"next":0}`), []byte(`["r3"]`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBatchRecord("a", []byte(`{"next":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBatches([]string{"b"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBatch("", nil, nil); err == nil || s.Err() != nil {
		t.Fatalf("an empty id: %v, store error %v (want refused, store usable)", err, s.Err())
	}
	s.Close()
	s = openAt(t, path, Options{})
	got, err := s.BatchRecords()
	if err != nil || len(got) != 1 || string(got["a"]) != `{"next":1}` {
		t.Fatalf("records after reopen: %q, %v", got, err)
	}
	if runs, err := s.BatchRuns("a"); err != nil || string(runs) != `["r1","r2"]` {
		t.Fatalf("runs after reopen: %q, %v", runs, err)
	}
	if runs, err := s.BatchRuns("b"); err != nil || runs != nil {
		t.Fatalf("runs of a deleted batch: %q, %v", runs, err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		v := append([]byte(nil), tx.Bucket(bucketBatches).Get([]byte("a"))...)
		v[len(v)-2] ^= 0x01
		return tx.Bucket(bucketBatches).Put([]byte("a"), v)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BatchRecords(); !errors.Is(err, errFrame) {
		t.Fatalf("damaged record read as %v, want a checksum error", err)
	}
	s.Close()
}
