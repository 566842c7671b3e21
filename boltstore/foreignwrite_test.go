package boltstore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestForeignWriteAfterKill: a writer with the log on is SIGKILLed mid-run; another program then
// commits one plain bbolt write transaction to the file (its own bucket), as a script or the
// bbolt CLI would; then wend opens it. bbolt's file is a plain database at the last checkpoint,
// so the foreign commit lands on it like any other, and the log past the checkpoint is replayed
// over it: every acknowledged event is there, the foreign bucket too, and the store checks
// clean. Kills at random times, and one right after a checkpoint's commit.
func TestForeignWriteAfterKill(t *testing.T) {
	asGiven(t)
	if testing.Short() {
		t.Skip("crash test")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 7))
	for i := range max(kills(t, 4), 2) {
		path := filepath.Join(t.TempDir(), "wend.db")
		keepOnFailure(t, path, sd)
		arg, delay := "", time.Duration(50_000+rng.IntN(200_000))*time.Microsecond
		if i == 0 {
			arg, delay = "synced", -1 // killed right after a checkpoint's commit
		}
		acked := killHelperOnce(t, "logwriter", arg, path, delay)

		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatalf("kill %d: plain bbolt open after the kill: %v", i, err)
		}
		foreign := []byte(fmt.Sprintf("foreign-%d", i))
		err = db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(foreign)
			if err != nil {
				return err
			}
			return b.Put([]byte("k"), []byte("v"))
		})
		must(t, err)
		must(t, db.Close())

		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("kill %d: open after a foreign write: %v", i, err)
		}
		r, err := s.Run("r1")
		if err != nil || r.LastSeq < acked {
			t.Fatalf("kill %d: run r1 at %d (%v), %d acknowledged", i, r.LastSeq, err, acked)
		}
		if evs, err := s.Events("r1", 0); err != nil || uint64(len(evs)) != r.LastSeq {
			t.Fatalf("kill %d: %d events (%v), want %d", i, len(evs), err, r.LastSeq)
		}
		ps, err := s.Check()
		must(t, err)
		for _, p := range ps {
			t.Errorf("kill %d: check: %s", i, p)
		}
		must(t, s.settle())
		must(t, s.db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(foreign); b == nil || string(b.Get([]byte("k"))) != "v" {
				t.Errorf("kill %d: the foreign bucket is gone", i)
			}
			return nil
		}))
		must(t, s.Close())
		fmt.Printf("RELIABILITY suite=boltstore-foreign-write kill=%d arg=%q acked=%d\n", i, arg, acked)
	}
}
