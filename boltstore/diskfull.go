package boltstore

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// A writer's Open on a full disk. Recovery writes: bbolt's commits of the log's records past
// its last checkpoint (replayLog), then the first segment of a new log (openWAL) and the small
// files beside it. When that runs out of space, Open fails with ErrDiskFull, saying how much
// space it needs; the store opened for reading (reading.go) needs none.

// testFailWrite, set only by tests, fails the write named (a replay's commit, a log segment's
// filling, the pid file) with its error, as a full disk would.
var testFailWrite = func(what string) error { return nil }

// ErrDiskFull is wrapped by the error of an Open for writing that ran out of disk space.
var ErrDiskFull = errors.New("the disk is full")

// noSpace reports whether err is a write that found no space: bbolt reports some of those as
// text only (the file's growth).
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		err != nil && strings.Contains(err.Error(), syscall.ENOSPC.Error())
}

// recoverySpace is the free space an Open for writing needs at most, in bytes: bbolt's pages
// for the records the log holds past the last checkpoint (twice their bytes: leaf pages are
// half full at worst after a split), the branch pages each replay commit copies, and the new
// log's first segment. The log's own segments are removed once bbolt holds their records,
// before the new one is made.
func (s *Store) recoverySpace() int64 {
	const (
		copied = 256 << 10 // branch and meta pages a commit rewrites
		files  = 64 << 10  // the pid file, the log's id
	)
	pending, err := s.logPending()
	if err != nil {
		pending = openBytesMax // the most a log holds past a checkpoint
	}
	return 2*pending + copied + firstSegmentSize + files
}

// logPending is the bytes of the log's records past bbolt's last checkpoint.
func (s *Store) logPending() (int64, error) {
	stored, err := s.logLSN()
	if err != nil {
		return 0, err
	}
	names, err := segments(walDir(s.path))
	if err != nil {
		return 0, err
	}
	var n int64
	err = readLog(names, func(lsn uint64, payload []byte) error {
		if lsn > stored {
			n += int64(walHeader + len(payload))
		}
		return nil
	})
	return n, err
}

// diskFull turns an Open's error that found no space into ErrDiskFull's, which says how much
// space is needed and that reading works meanwhile; other errors are returned as they are.
func (s *Store) diskFull(err error) error {
	if !noSpace(err) {
		return err
	}
	need := s.recoverySpace()
	return fmt.Errorf("%w (%w): opening it for writing needs %d MiB free on its disk (%d bytes) to replay its write-ahead log and start a new one: free that much and open it again; reading commands (wend list, show, history, check) open it without writing meanwhile",
		ErrDiskFull, err, (need+1<<20-1)>>20, need)
}
