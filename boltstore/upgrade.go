package boltstore

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The upgrade from schema 1, where every run's events were a bucket of their own, to schema 2
// (events.go): a writing Open moves the events of every run of at most ownBucketBytes into the
// shared bucket, a batch of runs per synced bbolt transaction. The first transaction makes the
// shared bucket, sets the schema to 2 (a wend that reads only schema 1 then refuses the file
// rather than miss the events moved) and keeps under meta's "upgrade_from" the key the next
// batch starts from; each batch moves its runs and moves that key on, and the last deletes it.
// A file whose upgrade was cut off is a file of schema 2, read as it is; the next writing Open
// goes on from there. Only whole runs move, each in one transaction, so a run's events are
// always in one place.

var keyUpgradeFrom = []byte("upgrade_from")

// upgradeBatchBytes bounds the event bytes one transaction of the upgrade moves: bbolt holds a
// transaction's pages in memory until it commits. A variable for tests.
var upgradeBatchBytes = 16 << 20

// UpgradeProgress is what Options.UpgradeProgress is told while an upgrade runs: runs looked at of
// Total (the runs with a bucket of their own when it began), Moved of them into the shared
// bucket so far.
type UpgradeProgress struct {
	Seen, Total, Moved int
}

// testHookUpgrade, set only by tests, is called after each transaction of the upgrade; an error
// stops the upgrade there, as a crash between two of its transactions would.
var testHookUpgrade = func(p UpgradeProgress) error { return nil }

// needsUpgrade reports whether the file is of schema 1 or its upgrade was cut off.
func needsUpgrade(tx *bolt.Tx) bool {
	meta := tx.Bucket(bucketMeta)
	return string(meta.Get(keySchema)) == schemaOwnOnly || meta.Get(keyUpgradeFrom) != nil
}

// upgradeEvents runs the upgrade to its end, when the file needs one.
func (s *Store) upgradeEvents(progress func(UpgradeProgress)) error {
	var need bool
	var p UpgradeProgress
	err := s.db.View(func(tx *bolt.Tx) error {
		if need = needsUpgrade(tx); !need {
			return nil
		}
		from := tx.Bucket(bucketMeta).Get(keyUpgradeFrom)
		c := tx.Bucket(bucketEvents).Cursor()
		for k, _ := c.Seek(nil); k != nil; k, _ = c.Next() {
			p.Total++
			if from != nil && bytes.Compare(k, from) < 0 {
				p.Seen++
			}
		}
		return nil
	})
	if err != nil || !need {
		return err
	}
	for {
		done := false
		err := s.db.Update(func(tx *bolt.Tx) error {
			var err error
			done, err = upgradeBatch(tx, &p)
			return err
		})
		if err != nil {
			return fmt.Errorf("upgrade the events to schema %s (%d of %d runs looked at): %w", schemaVersion, p.Seen, p.Total, err)
		}
		testHookSync()
		if err := testHookUpgrade(p); err != nil {
			return err
		}
		if progress != nil {
			progress(p)
		}
		if done {
			return nil
		}
	}
}

// upgradeBatch moves the next batch of runs and reports whether it was the last.
func upgradeBatch(tx *bolt.Tx, p *UpgradeProgress) (done bool, err error) {
	meta := tx.Bucket(bucketMeta)
	var from []byte
	if string(meta.Get(keySchema)) == schemaOwnOnly {
		for _, b := range [][]byte{bucketRunEvents, bucketRunSlots} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return false, err
			}
		}
		if err := meta.Put(keySchema, []byte(schemaVersion)); err != nil {
			return false, err
		}
		from = []byte{}
	} else {
		from = bytes.Clone(meta.Get(keyUpgradeFrom))
	}
	eb, sb := tx.Bucket(bucketEvents), tx.Bucket(bucketRunEvents)
	// The runs to move are chosen first, then moved: the moves change the bucket the cursor
	// walks.
	var move [][]byte
	var next []byte
	size := 0
	c := eb.Cursor()
	k, v := c.Seek(from)
	for ; k != nil; k, v = c.Next() {
		if size >= upgradeBatchBytes {
			next = bytes.Clone(k)
			break
		}
		p.Seen++
		if v != nil {
			continue // no bucket: damage, left where it is for wend check to report
		}
		n, ok := movable(eb.Bucket(k))
		if !ok {
			continue
		}
		move = append(move, bytes.Clone(k))
		size += n
	}
	sb.FillPercent = upgradeFill
	for _, id := range move {
		if err := moveToShared(tx, eb, sb, id); err != nil {
			return false, fmt.Errorf("run %s: %w", id, err)
		}
		p.Moved++
	}
	if next == nil {
		return true, meta.Delete(keyUpgradeFrom)
	}
	return false, meta.Put(keyUpgradeFrom, next)
}

// upgradeFill is the shared bucket's FillPercent while the upgrade fills it in key order: the
// pages are left with room for the runs in them still open to grow without splitting at once.
const upgradeFill = 0.9

// movable is the size of the keys and values of a run's own bucket b, and whether they are to
// move: at most ownBucketBytes, and no bucket in it (damage, left for wend check to report).
func movable(b *bolt.Bucket) (n int, ok bool) {
	c := b.Cursor()
	for k, v := c.Seek(nil); k != nil; k, v = c.Next() {
		if v == nil {
			return n, false
		}
		if n += len(k) + len(v); n > ownBucketBytes {
			return n, false
		}
	}
	return n, true
}

// moveToShared moves a run's events from its own bucket in eb into the shared bucket sb, keys
// and values as they are (a damaged one stays as damaged, for wend check to report).
func moveToShared(tx *bolt.Tx, eb, sb *bolt.Bucket, runID []byte) error {
	own := eb.Bucket(runID)
	slot, err := newSlot(tx, sb, runID)
	if err != nil {
		return err
	}
	c := own.Cursor()
	for k, v := c.Seek(nil); k != nil; k, v = c.Next() {
		if err := sb.Put(sharedEventKey(slot, k), bytes.Clone(v)); err != nil {
			return err
		}
	}
	return eb.DeleteBucket(runID)
}
