package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// testHookReplay, set only by tests, is called at each step of replayLog, so a crash test can
// kill the process exactly there.
var testHookReplay = func(step string) {}

// replayLog applies the log's records that bbolt does not hold yet (those after its keyLogLSN),
// each in a transaction of its own, syncs bbolt and removes the log. It runs at every Open,
// with or without Options.NoLog, so a database last written with the log loses nothing opened
// without it. restored says a checkpoint's meta page was put back (pin.go): bbolt is at that
// state, written after the last sync. With log, the state replayed to becomes the checkpoint and
// bbolt's commits go unsynced from here. It returns the LSN the next record takes.
func (s *Store) replayLog(log, restored bool) (next uint64, err error) {
	stored, err := s.logLSN()
	if err != nil {
		return 0, err
	}
	dir := walDir(s.path)
	// A spare or recycled segment left by a crash holds no record of the log: the next log
	// makes its own.
	for _, n := range []string{spareName, recycledName} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("remove spare log segment: %w", err)
		}
	}
	names, err := segments(dir)
	if err != nil {
		return 0, err
	}
	if len(names) == 0 && !restored {
		if log { // the state opened, synced, is the first checkpoint
			s.unsynced = true
			if err := s.checkpointNow(); err != nil {
				return 0, err
			}
		}
		return stored + 1, nil
	}
	// The state opened is pinned while the replay writes without sync, so a crash now finds it
	// as it is: the restored checkpoint, or bbolt's synced state, made the checkpoint here.
	s.unsynced = true
	if restored {
		pin, err := s.db.Begin(false)
		if err != nil {
			return 0, err
		}
		s.setPin(pin)
		s.db.NoSync = true
	} else {
		if err := s.checkpointNow(); err != nil {
			return 0, err
		}
	}
	last := stored
	err = readLog(names, func(lsn uint64, payload []byte) error {
		if lsn <= stored {
			return nil
		}
		if lsn != last+1 {
			return fmt.Errorf("log: the database holds records up to %d, the log goes on at %d: %w", stored, lsn, ErrDamaged)
		}
		if err := s.applyRecord(lsn, payload); err != nil {
			return fmt.Errorf("log: record %d: %w", lsn, err)
		}
		last = lsn
		testHookReplay("applied")
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("replay the log %s: %w", dir, err)
	}
	if log {
		// Synced, saved as the checkpoint, pinned: the log's records are in that state.
		if err := s.checkpointNow(); err != nil {
			return 0, fmt.Errorf("replay the log: %w", err)
		}
	} else {
		// Synced even when nothing was replayed: after a process crash, bbolt may hold the
		// records only in the page cache, and the log is about to go.
		testHookSync()
		if err := s.db.Sync(); err != nil {
			return 0, fmt.Errorf("replay the log: sync database: %w", err)
		}
		if err := removeCheckpoint(s.path); err != nil {
			return 0, err
		}
		s.setPin(nil)
		s.db.NoSync, s.unsynced = false, false
	}
	testHookReplay("synced")
	if err := removeLog(dir, names); err != nil {
		return 0, err
	}
	return last + 1, nil
}

// applyRecord writes one log record's commits and its LSN in one bbolt transaction. Each was
// validated before it was logged, so one that no longer continues its run means the log and
// the database disagree: that is damage, not a commit to drop.
func (s *Store) applyRecord(lsn uint64, payload []byte) error {
	ps, err := decodeBatch(payload)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrDamaged)
	}
	err = guard(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			view := newBatchView(tx)
			for _, p := range ps {
				if err := view.validate(p); err != nil {
					return fmt.Errorf("a logged commit does not continue the database: %w: %w", err, ErrDamaged)
				}
				if err := apply(tx, p); err != nil {
					return err
				}
				view.accept(p)
			}
			if err := s.beforeCommit(tx, len(payload)); err != nil {
				return err
			}
			return putLogLSN(tx, lsn)
		})
	})
	if err == nil && !s.db.NoSync {
		testHookSync()
	}
	return err
}

func putLogLSN(tx *bolt.Tx, lsn uint64) error {
	return tx.Bucket(bucketMeta).Put(keyLogLSN, binary.BigEndian.AppendUint64(nil, lsn))
}

// logLSN is the LSN of the last log record bbolt holds, 0 when none.
func (s *Store) logLSN() (uint64, error) {
	var lsn uint64
	err := guard(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketMeta).Get(keyLogLSN)
			switch {
			case v == nil:
			case len(v) != 8:
				return fmt.Errorf("meta %s holds %d bytes: %w", keyLogLSN, len(v), ErrDamaged)
			default:
				lsn = binary.BigEndian.Uint64(v)
			}
			return nil
		})
	})
	return lsn, err
}

// removeLog removes segments bbolt holds every record of (it is synced), and the folder when
// that leaves it empty, and syncs what changed.
func removeLog(dir string, names []string) error {
	for _, n := range names {
		if err := os.Remove(n); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove log segment: %w", err)
		}
	}
	if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
		return syncDir(filepath.Dir(dir))
	}
	return syncDir(dir) // the current segment is in it
}
