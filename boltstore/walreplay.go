package boltstore

import (
	"bytes"
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

// replayLog applies the log's records that bbolt does not hold yet (those after its
// keyLogLSN), in bbolt transactions of up to replayBytesMax bytes of records, each committed
// (synced) with the LSN of its last record, then removes the log. It runs at every Open, with
// or without Options.NoLog, so a database last written with the log loses nothing opened
// without it. A crash during the replay leaves bbolt at its last commit, and the next Open
// replays from there. It returns the LSN the next record takes.
//
// A damaged log (walcheck.go) is refused, unless accept: then the records before the damage
// are applied, the loss is recorded, and the log is removed.
//
// A store opened for reading (reading.go) applies the records into one transaction it keeps
// open, never committed, and removes nothing; accepting a damaged log is left to a writer
// (errLogLossToRecord).
func (s *Store) replayLog(accept bool) (next uint64, err error) {
	stored, err := s.logLSN()
	if err != nil {
		return 0, err
	}
	tail, err := s.logTail()
	if err != nil {
		return 0, err
	}
	dir := walDir(s.path)
	// A spare or recycled segment left by a crash holds no record of the log: the next log
	// makes its own.
	for _, n := range []string{spareName, largeName, recycledName} {
		if s.readOnly {
			break
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("remove spare log segment: %w", err)
		}
	}
	names, err := segments(dir)
	if err != nil {
		return 0, err
	}
	if len(names) == 0 && tail == 0 {
		return stored + 1, nil
	}
	r := replayer{s: s, last: stored}
	read := stored // the last record read, applied or not
	err = readLog(fromRecord(names, stored+1), func(lsn uint64, payload []byte) error {
		read = max(read, lsn)
		if lsn <= stored {
			return nil
		}
		if lsn != r.last+1 {
			return logDamaged("the database holds records up to %d, the log goes on at record %d: the records between are missing", stored, lsn)
		}
		if err := r.apply(lsn, payload); err != nil {
			return fmt.Errorf("log: record %d: %w", lsn, err)
		}
		testHookReplay("applied")
		return nil
	})
	if err == nil {
		err = checkLogTail(names, tail)
	}
	if err == nil {
		err = checkLogReached(tail, stored, read)
	}
	var damage *logDamagedError
	if errors.As(err, &damage) && tail == 0 && read <= stored {
		// What is left of a log that bbolt holds every record of and that was being removed
		// (a clean Close, a replay, an accepted loss, cut by a crash; removals may reach the
		// disk in any order): no acknowledged commit can be missing from it.
		err = nil
	}
	switch {
	case errors.As(err, &damage) && accept && s.readOnly:
		r.rollback()
		return 0, errLogLossToRecord
	case errors.As(err, &damage) && accept:
		if err = r.commit(); err == nil {
			err = s.acceptDamagedLog(dir, damage, r.last) // deletes the tail too
		}
	case errors.As(err, &damage):
		r.rollback()
		return 0, s.refuseDamagedLog(dir, damage, r.last)
	case err == nil && s.readOnly:
		s.keepReplayed(r)
		return r.last + 1, nil
	case err == nil:
		err = r.finish(tail != 0)
	}
	if err != nil {
		r.rollback()
		return 0, fmt.Errorf("replay the log %s: %w", dir, err)
	}
	testHookReplay("synced")
	if err := removeLog(dir, names); err != nil {
		return 0, err
	}
	return r.last + 1, nil
}

// fromRecord drops the segments before the last one starting at or before record lsn: every
// record in them comes before lsn. A crash while a checkpoint removed segments may have left
// some of them, not necessarily in order.
func fromRecord(names []string, lsn uint64) []string {
	from := 0
	for i, n := range names {
		if first, _, _ := parseSegment(n); first <= lsn {
			from = i
		}
	}
	return names[from:]
}

// replayBytesMax is the records a replay applies in one bbolt transaction: bbolt keeps them,
// and its dirty pages, in memory until the commit, so the replay's memory is a few times this,
// whatever the log's size.
const replayBytesMax = 2 << 20

// replayer applies log records into one bbolt transaction, committed every replayBytesMax bytes.
type replayer struct {
	s     *Store
	tx    *bolt.Tx
	bytes int
	last  uint64 // the LSN of the last record applied
}

// apply writes one log record's commits and its LSN. Each was validated before it was logged,
// so one that no longer continues its run means the log and the database disagree: that is
// damage, not a commit to drop.
func (r *replayer) apply(lsn uint64, payload []byte) error {
	// bbolt keeps what Put is given until the transaction commits, and the log's reader reuses
	// its buffer: the commits decoded must not share it.
	ps, err := decodeBatch(bytes.Clone(payload))
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrDamaged)
	}
	if r.tx == nil {
		if r.tx, err = r.s.db.Begin(true); err != nil {
			return err
		}
	}
	tx := r.tx
	err = guard(func() error {
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
		return putLogLSN(tx, lsn)
	})
	if err != nil {
		return err
	}
	r.last = lsn
	r.bytes += len(payload)
	if r.bytes >= replayBytesMax && !r.s.readOnly {
		return r.commit()
	}
	return nil
}

// keepReplayed makes the replay's transaction, if any, the store's open transaction: reads
// see the log's records in it (view) until Close rolls it back.
func (s *Store) keepReplayed(r replayer) {
	if r.tx == nil {
		return
	}
	s.open = openTx{tx: r.tx, lsn: r.last}
	s.hasOpen.Store(true)
}

// commit commits the records applied since the last commit, synced by bbolt.
func (r *replayer) commit() error {
	if r.tx == nil {
		return nil
	}
	tx := r.tx
	r.tx, r.bytes = nil, 0
	if err := testFailWrite("replay"); err != nil {
		_ = guard(tx.Rollback)
		return err
	}
	if err := guard(tx.Commit); err != nil {
		return err
	}
	testHookSync()
	return nil
}

// finish commits the last records applied and, when untail, deletes keyLogTail with them: the
// log is about to be removed, and the key must not name a removed segment (walcheck.go).
func (r *replayer) finish(untail bool) error {
	if untail && r.tx == nil {
		var err error
		if r.tx, err = r.s.db.Begin(true); err != nil {
			return err
		}
	}
	if untail {
		if err := guard(func() error { return r.tx.Bucket(bucketMeta).Delete(keyLogTail) }); err != nil {
			return err
		}
	}
	return r.commit()
}

func (r *replayer) rollback() {
	if r.tx != nil {
		_ = guard(r.tx.Rollback)
		r.tx = nil
	}
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
