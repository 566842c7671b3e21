package boltstore

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// bucketKept holds what readers derive from the runs and keep beside them (the metrics'
// summaries, server/metrics), a bucket per reader's name:
//
//	position -> uvarint: the change feed's position (changes.go) what is kept is up to
//	sum      -> the reader's bytes for the whole
//	runs/ID  -> the reader's bytes for run ID
//
// So a reader in a new process starts from what the last one kept, at its position, and reads
// only the runs the change feed names after it. A reader writes it in the store's open
// transaction (Keep), beside the commits it derives from: lost at a crash with them, and then
// at an older position the log's replay of the feed goes on from.
var bucketKept = []byte("kept")

var (
	keyKeptPosition = []byte("position")
	keyKeptSum      = []byte("sum")
	keyKeptRuns     = []byte("runs")
)

// Kept returns what reader name kept: its position, its sum and the values of the runs of ids
// it holds one for. ok is false when it kept nothing (or what it kept does not read).
func (s *Store) Kept(name string, ids []string) (pos uint64, sum []byte, runs map[string][]byte, ok bool, err error) {
	runs = map[string][]byte{}
	err = s.view("read kept "+name, func(tx *bolt.Tx) error {
		b := keptBucket(tx, name)
		if b == nil {
			return nil
		}
		p, w := binary.Uvarint(b.Get(keyKeptPosition))
		v := b.Get(keyKeptSum)
		if w <= 0 || v == nil {
			return nil
		}
		pos, sum, ok = p, append([]byte(nil), v...), true
		if rb := b.Bucket(keyKeptRuns); rb != nil {
			for _, id := range ids {
				if v := rb.Get([]byte(id)); v != nil {
					runs[id] = append([]byte(nil), v...)
				}
			}
		}
		return nil
	})
	return pos, sum, runs, ok, err
}

func keptBucket(tx *bolt.Tx, name string) *bolt.Bucket {
	kb := tx.Bucket(bucketKept)
	if kb == nil {
		return nil
	}
	return kb.Bucket([]byte(name))
}

// Keep writes reader name's position and sum, and the values of runs (a nil value deletes
// the run's), after deleting every run's value first when reset. It writes into the store's
// open transaction when there is one, with no sync of its own: what it keeps becomes durable
// at the next checkpoint, with the commits it was derived from, or goes at a crash with them
// (and is written again in the transaction a failed commit's redo begins). Otherwise, and for
// a reset, it commits a transaction of its own.
func (s *Store) Keep(name string, pos uint64, sum []byte, runs map[string][]byte, reset bool) error {
	if s.readOnly {
		return fmt.Errorf("keep %s: %w", name, ErrReadOnly)
	}
	write := func(tx *bolt.Tx) error {
		kb, err := tx.CreateBucketIfNotExists(bucketKept)
		if err != nil {
			return err
		}
		b, err := kb.CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return err
		}
		if reset && b.Bucket(keyKeptRuns) != nil {
			if err := b.DeleteBucket(keyKeptRuns); err != nil {
				return err
			}
		}
		rb, err := b.CreateBucketIfNotExists(keyKeptRuns)
		if err != nil {
			return err
		}
		// In key order: bbolt splits a node only at commit, and a put in the middle of one
		// moves what follows it, so many puts out of order cost their count squared.
		for _, id := range slices.Sorted(maps.Keys(runs)) {
			v := runs[id]
			if v == nil {
				err = rb.Delete([]byte(id))
			} else {
				err = rb.Put([]byte(id), v)
			}
			if err != nil {
				return err
			}
		}
		if err := b.Put(keyKeptPosition, binary.AppendUvarint(nil, pos)); err != nil {
			return err
		}
		return b.Put(keyKeptSum, sum)
	}
	if err := s.usable(); err != nil {
		return fmt.Errorf("keep %s: %w", name, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if reset { // every run's value: too much to hold in the open transaction's memory
		if err := s.commitOpen(); err != nil {
			return fmt.Errorf("keep %s: %w", name, err)
		}
	}
	if tx := s.open.tx; tx != nil {
		if err := guard(func() error { return write(tx) }); err != nil {
			// bbolt failed inside the transaction that holds answered commits: redo them in a
			// new one, without what this tried to keep.
			s.redoOpen(tx, true)
			return fmt.Errorf("keep %s: %w", name, err)
		}
		s.open.kept = append(s.open.kept, write)
		return nil
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		return fmt.Errorf("keep %s: %w", name, err)
	}
	if err := guard(func() error { return write(tx) }); err != nil {
		tx.Rollback()
		return fmt.Errorf("keep %s: %w", name, err)
	}
	if err := s.commitTx(tx); err != nil {
		s.setFatal(err)
		return fmt.Errorf("keep %s: %w", name, s.Err())
	}
	testHookSync()
	s.boltTxs.Add(1)
	return nil
}
