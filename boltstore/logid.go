package boltstore

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The log's identity: how Open tells a database closed cleanly from one whose log is missing.
//
// While a store runs with its log, the meta bucket holds keyLogID, a random id, and the log
// folder a file logIDName with the same bytes, synced before the key is in a checkpoint. A
// clean Close deletes the key (in the transaction metaTwice writes) before it removes the log.
// So a database whose meta bucket holds the key was not closed cleanly, and the commits
// acknowledged since its last checkpoint are only in the log beside it: a missing folder, or
// one whose id differs (the log of another copy), is refused at Open with ErrLogMissing,
// unless Options.AcceptLogLoss says to go on without it.

// keyLogLost, in the meta bucket, says that the database was opened without its log (accepted
// loss): when, what was wrong with the log, and the last log record bbolt held. It stays, so
// that `wend check` reports the database as behind what was acknowledged.
var keyLogLost = []byte("log_lost")

// keyLogID, in the meta bucket, is the id of the log in front of the database while it runs.
var keyLogID = []byte("log_id")

// logIDName is the file, in the log folder, holding the log's id.
const logIDName = "id"

// acceptLogLossEnv set to 1 is Options.AcceptLogLoss for every Open of the process.
const acceptLogLossEnv = "WEND_ACCEPT_LOG_LOSS"

// storedLogID is the id of the log the database was last written with, nil when it was
// closed cleanly (or never had a log).
func (s *Store) storedLogID() ([]byte, error) {
	var id []byte
	err := guard(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			id = bytes.Clone(tx.Bucket(bucketMeta).Get(keyLogID))
			return nil
		})
	})
	return id, err
}

// checkLogPresent refuses a database not closed cleanly whose log is missing or not its own,
// unless accept; it returns the id to go on with (nil for a new one).
func (s *Store) checkLogPresent(accept bool) ([]byte, error) {
	id, err := s.storedLogID()
	if err != nil || id == nil {
		return nil, err
	}
	dir := walDir(s.path)
	got, rerr := os.ReadFile(filepath.Join(dir, logIDName))
	if rerr == nil && bytes.Equal(got, id) {
		return id, nil
	}
	what := "is missing"
	switch {
	case rerr == nil:
		what = "is not its own (another copy's log)"
	case !errors.Is(rerr, os.ErrNotExist):
		what = fmt.Sprintf("cannot be read (%v)", rerr)
	}
	if accept && s.readOnly {
		return nil, errLogLossToRecord
	}
	if accept {
		return nil, s.recordLogLoss(dir, what)
	}
	return nil, fmt.Errorf("%w: %s was not closed cleanly and its write-ahead log %s %s, so the commits acknowledged since its last checkpoint may be lost; put the log folder back beside the database and open again, or back up %s and open it with %s=1 to go on without them",
		ErrLogMissing, s.path, dir, what, s.path, acceptLogLossEnv)
}

// recordLogLoss writes keyLogLost (synced, as every bbolt commit before the log starts): the
// database goes on at its last checkpoint without the commits its missing log held.
func (s *Store) recordLogLoss(dir, what string) error {
	lsn, err := s.logLSN()
	if err != nil {
		return err
	}
	return s.recordLoss(fmt.Sprintf("opened with %s=1 at %s while its write-ahead log %s %s: commits acknowledged after log record %d (its last checkpoint) were lost",
		acceptLogLossEnv, time.Now().UTC().Format(time.RFC3339), dir, what, lsn))
}

// recordLoss writes note as keyLogLost, after the note of an earlier loss if there is one,
// deletes the acknowledgement (this loss is new) and the log's tail (the log is given up).
func (s *Store) recordLoss(note string) error {
	return guard(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			if before := meta.Get(keyLogLost); len(before) > 0 {
				note = string(before) + "; then " + note
			}
			if err := meta.Delete(keyLogLossAck); err != nil {
				return err
			}
			if err := meta.Delete(keyLogTail); err != nil {
				return err
			}
			return meta.Put(keyLogLost, []byte(note))
		})
	})
}

// logLoss is keyLogLost's note, "" when the database never went on without its log, and
// keyLogLossAck's, "" when nobody acknowledged the loss.
func (s *Store) logLoss() (note, ack string, err error) {
	err = s.view("check database", func(tx *bolt.Tx) error {
		note = string(tx.Bucket(bucketMeta).Get(keyLogLost))
		ack = string(tx.Bucket(bucketMeta).Get(keyLogLossAck))
		return nil
	})
	return note, ack, err
}

// markLog writes the log's id into its folder (synced) and then into the meta bucket, with the
// log's tail (its first segment: walcheck.go), in a synced bbolt commit. id nil makes a new one.
//
// A database reopened after a crash goes on with the id its folder already holds, and that
// file is not written again: writing it truncates it first, and a process killed between the
// truncation and the write would leave a database whose own log reads as another's. A new id
// is written while the meta bucket holds none, when a torn file is harmless.
func (s *Store) markLog(id []byte) error {
	dir := walDir(s.path)
	if id == nil {
		id = make([]byte, 16)
		rand.Read(id)
		if err := writeSynced(filepath.Join(dir, logIDName), id); err != nil {
			return fmt.Errorf("write log id: %w", err)
		}
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return guard(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			if err := putLogTail(tx, s.log.first); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(keyLogID, id)
		})
	})
}

// unmarkLog deletes the log's id and tail from the meta bucket, in tx: the database is about
// to be synced with every commit, and its log removed.
func unmarkLog(tx *bolt.Tx) error {
	if err := tx.Bucket(bucketMeta).Delete(keyLogTail); err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Delete(keyLogID)
}

func writeSynced(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = testFailWrite("log id") // a test's kill between the truncation and the write
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
