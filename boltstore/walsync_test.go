package boltstore

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestLogSyncFailureReplays (docs/reliability.md A5, A11): a log sync that fails stops the
// store, whose open transaction holds the commits answered since the checkpoint; the next Open
// starts from the checkpoint and replays the log, so the store is whole, every acknowledged
// commit is there, and the failed one is there only as the log holds it (here whole: only its
// sync failed), as after any failed fsync.
func TestLogSyncFailureReplays(t *testing.T) {
	s, path, u, acked := fiveCommits(t)
	s.log.failSync = func(*os.File) error { return syscall.EIO }
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("commit: %v, want EIO", err)
	}
	s = failedThenReopened(t, s, path, u, syscall.EIO)
	if r, err := s.Run("r1"); err != nil || r.LastSeq != acked+1 {
		t.Fatalf("after restart the run is %+v (%v), want it at %d: the acknowledged commits and the logged one", r, err, acked+1)
	}
	commitRun(t, s, storetest.Next(u.Run, history.ActivityCompleted, 1))
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}

// TestLogWriteSyncRefusedWritesThenSyncs: where the kernel refuses to write and sync a record
// in one call (writeSync: no pwritev2 or RWF_DSYNC, or a seccomp filter), the log writes the
// record, then fdatasyncs it, from the first refusal on; the records so written are the log's,
// replayed after the store fails.
func TestLogWriteSyncRefusedWritesThenSyncs(t *testing.T) {
	s, path, u, acked := fiveCommits(t)
	refusals := 0
	s.log.writeSyncs = true // as on Linux: the portable build never asks
	s.log.writeSync = func(*os.File, []byte, int64) (bool, error) {
		refusals++
		return false, nil
	}
	commitRun(t, s, u)
	u = storetest.Next(u.Run, history.ActivityCompleted, 1)
	commitRun(t, s, u)
	if refusals != 1 || s.log.writeSyncs {
		t.Fatalf("%d refusals, writeSyncs %v: want one, then the write and sync without asking again", refusals, s.log.writeSyncs)
	}
	// The next sync fails: the store drops its open transaction, and the next Open has only the
	// log for the two commits above.
	u = storetest.Next(u.Run, history.ActivityCompleted, 1)
	s.log.failSync = func(*os.File) error { return syscall.EIO }
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("commit: %v, want EIO", err)
	}
	s = failedThenReopened(t, s, path, u, syscall.EIO)
	if r, err := s.Run("r1"); err != nil || r.LastSeq != acked+3 {
		t.Fatalf("after restart the run is %+v (%v), want it at %d: the two commits written after the refusal and the logged one", r, err, acked+3)
	}
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}
