package boltstore

import (
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A damaged log is found, never replayed short in silence. What a crash leaves differs from
// damage as follows:
//
//   - A segment has the size its name gives from its creation (it is filled and synced under a
//     spare's name first) until its removal; no append changes it (wal.go). A segment of
//     another size was cut short or grown afterwards: truncated to zero, to half.
//   - Segments follow each other without a gap (readLog), and a segment closed at a roll ends
//     with the roll record, written only once the next segment exists: a roll record with no
//     segment after it is a segment deleted.
//   - Each checkpoint writes, with the records it commits, the first LSN of the segment being
//     appended to (keyLogTail): that segment exists until a later checkpoint names another, so
//     one missing, or holding fewer records than bbolt says were written to it, is damage. The
//     key is deleted before the log is removed (replay, Close), never left naming a removed
//     segment.
//
// Without the key, and with no record bbolt lacks, what is left is a log being removed when a
// crash came (its removals reach the disk in any order): damage there loses nothing and is not
// refused (replayLog).
//
// So the newest segment deleted, cut to zero or cut to half, or one in the middle deleted,
// fails Open with ErrLogDamaged, naming the segment, the last record before the damage and
// the two ways on: put the log back as it was, or accept the loss (Options.AcceptLogLoss, as
// for a missing log, logid.go), which keeps the records before the damage, records the loss
// in the meta bucket for `wend check` to report, and goes on.

// keyLogTail, in the meta bucket, is the first LSN of the log segment appended to at the last
// checkpoint (big-endian uint64); absent when no log is in front of bbolt, and in a database
// last written by a wend that did not keep it.
var keyLogTail = []byte("log_tail")

// logDamagedError is damage found in the log itself: a record, a segment's size, a segment
// missing. It is both ErrLogDamaged and ErrDamaged.
type logDamagedError struct{ msg string }

func (e *logDamagedError) Error() string { return e.msg }

func (e *logDamagedError) Is(target error) bool {
	return target == ErrLogDamaged || target == ErrDamaged
}

func logDamaged(format string, args ...any) error {
	return &logDamagedError{fmt.Sprintf(format, args...)}
}

func putLogTail(tx *bolt.Tx, first uint64) error {
	return tx.Bucket(bucketMeta).Put(keyLogTail, binary.BigEndian.AppendUint64(nil, first))
}

// logTail is keyLogTail, 0 when absent.
func (s *Store) logTail() (uint64, error) {
	var first uint64
	err := guard(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketMeta).Get(keyLogTail)
			switch {
			case v == nil:
			case len(v) != 8:
				return fmt.Errorf("meta %s holds %d bytes: %w", keyLogTail, len(v), ErrDamaged)
			default:
				first = binary.BigEndian.Uint64(v)
			}
			return nil
		})
	})
	return first, err
}

// markLogTail writes the segment appended to as the log's tail in the checkpoint about to
// commit: into the open transaction, or, when none is open but segments were closed (they are
// removed after this checkpoint), in a transaction of its own. writeMu is held.
func (s *Store) markLogTail() error {
	switch {
	case s.log == nil:
		return nil
	case s.open.tx != nil:
		return putLogTail(s.open.tx, s.log.first)
	case len(s.closedSegs) > 0:
		err := guard(func() error {
			return s.db.Update(func(tx *bolt.Tx) error { return putLogTail(tx, s.log.first) })
		})
		if err == nil {
			testHookSync()
			s.boltTxs.Add(1)
		}
		return err
	}
	return nil
}

// checkLogTail checks, before the log is read, that the segment keyLogTail names is there.
func checkLogTail(names []string, tail uint64) error {
	if tail == 0 {
		return nil
	}
	for _, n := range names {
		if first, _, _ := parseSegment(n); first == tail {
			return nil
		}
	}
	return logDamaged("the segment starting at record %d, which the last checkpoint was appending to, is missing", tail)
}

// checkLogReached checks, after the log is read, that it held every record bbolt says was
// written to the tail segment: up to stored, when the tail starts at or before it.
func checkLogReached(tail, stored, last uint64) error {
	if tail == 0 || tail > stored || last >= stored {
		return nil
	}
	if last < tail {
		return logDamaged("the segment starting at record %d holds no record, yet the database's last checkpoint holds records %d to %d from it", tail, tail, stored)
	}
	return logDamaged("the log ends at record %d, yet the database's last checkpoint holds records up to %d from the segment starting at record %d", last, stored, tail)
}

// refuseDamagedLog is Open's error for a damaged log, in the words and with the way out of a
// missing one (checkLogPresent). last is the last record before the damage.
func (s *Store) refuseDamagedLog(dir string, damage error, last uint64) error {
	return &logDamagedError{fmt.Sprintf("%v: %s was not closed cleanly and its write-ahead log %s is damaged (%v), so commits acknowledged after log record %d may be lost; put the log folder back as it was and open again, or back up %s and %s and open it with %s=1 to go on with the records before the damage",
		ErrLogDamaged, s.path, dir, damage, last, s.path, dir, acceptLogLossEnv)}
}

// acceptDamagedLog records that the database goes on without the log past record last (the
// records before the damage are committed), and deletes keyLogTail, before the caller removes
// the log.
func (s *Store) acceptDamagedLog(dir string, damage error, last uint64) error {
	note := fmt.Sprintf("opened with %s=1 at %s while its write-ahead log %s was damaged (%v): commits acknowledged after log record %d (the last before the damage) were lost",
		acceptLogLossEnv, time.Now().UTC().Format(time.RFC3339), dir, damage, last)
	return s.recordLoss(note)
}
