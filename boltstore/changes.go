package boltstore

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// changeFeedMax bounds the changes the feed remembers: a reader further behind reads again
// whatever it derives from the runs.
const changeFeedMax = 1 << 16

// bucketChanges is the change feed: the runs that commits and purges touched, numbered in
// the order they were made (the n-th change is at position n, the bucket's sequence):
//
//	big-endian uint64(position) -> run id, after a 0 byte for a purge
//
// It is written in the transaction of the change (apply, deleteRun), so the log's replay
// makes it again after a crash, and it lasts across processes: a reader that keeps something
// derived from the runs beside them (the metrics' summaries, kept.go) re-reads, in a new
// process as in the same one, only the runs changed since it last looked, never every run.
// It keeps the last changeFeedMax changes.
var bucketChanges = []byte("changes")

// purgeMark opens a purge's entry in the feed: a run id never starts with a 0 byte (it is
// refused as a key of the runs), so an entry of an older build is read as a commit.
const purgeMark = 0

// noteChange records in tx that run id changed: a commit, or its purge when purged.
func noteChange(tx *bolt.Tx, id []byte, purged bool) error {
	b := tx.Bucket(bucketChanges)
	if b == nil {
		return nil // a database opened for reading before its first Open for writing since the feed exists
	}
	n, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("change feed: %w", err)
	}
	v := id
	if purged {
		v = append([]byte{purgeMark}, id...)
	}
	if err := b.Put(binary.BigEndian.AppendUint64(nil, n), v); err != nil {
		return fmt.Errorf("change feed: %w", err)
	}
	if n > changeFeedMax {
		if err := b.Delete(binary.BigEndian.AppendUint64(nil, n-changeFeedMax)); err != nil {
			return fmt.Errorf("change feed: %w", err)
		}
	}
	return nil
}

// buildChangeFeed adds the change feed to a database that lacks it, empty: a reader with a
// position from before has none in it, and reads every run once.
func buildChangeFeed(tx *bolt.Tx) error {
	_, err := tx.CreateBucketIfNotExists(bucketChanges)
	return err
}

// ChangedRuns returns the ids of the runs changed (committed or purged) after position since,
// each once, and the position now reached. complete is false when changes after since have
// been forgotten (or since is not a position of this feed): the caller must then read every
// run again. A reader with nothing yet takes now from a first call, then reads every run,
// then asks from now on.
func (s *Store) ChangedRuns(since uint64) (ids []string, now uint64, complete bool) {
	seen := map[string]bool{}
	now, complete = s.walkFeed(since, func(id string, _ bool) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	})
	if !complete {
		return nil, now, false
	}
	return ids, now, true
}

// PurgedRuns returns the ids of the runs purged after position since, and the position now
// reached; complete as for ChangedRuns. A reader that sees every commit as it passes (the
// metrics' counters) learns here what went without a commit.
func (s *Store) PurgedRuns(since uint64) (ids []string, now uint64, complete bool) {
	now, complete = s.walkFeed(since, func(id string, purged bool) {
		if purged {
			ids = append(ids, id)
		}
	})
	if !complete {
		return nil, now, false
	}
	return ids, now, true
}

// walkFeed calls each for every change after position since, in order, and returns the
// position now reached; complete is false (and each was not called) when changes after since
// have been forgotten, since is past the feed's end, or the feed could not be read.
func (s *Store) walkFeed(since uint64, each func(id string, purged bool)) (now uint64, complete bool) {
	err := s.view("read the change feed", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketChanges)
		if b == nil {
			return nil
		}
		now = b.Sequence()
		if since > now {
			return nil
		}
		c := b.Cursor()
		if k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) > since+1 {
			return nil // forgotten
		}
		complete = true
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, since+1)); k != nil; k, v = c.Next() {
			purged := len(v) > 0 && v[0] == purgeMark
			if purged {
				v = v[1:]
			}
			each(string(v), purged)
		}
		return nil
	})
	return now, complete && err == nil
}
