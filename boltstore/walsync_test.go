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

// TestLogSyncFollowsBboltsCommit (docs/reliability.md A5, A11): between checkpoints bbolt
// commits a transaction while its record is being written, before the log's fdatasync returns.
// A sync that then fails stops the store, though bbolt holds the transaction; the next Open
// starts from the checkpoint and replays the log, so the store is whole, every acknowledged
// commit is there, and the failed one is there only as the log holds it (here whole: only
// its sync failed), as after any failed fsync.
func TestLogSyncFollowsBboltsCommit(t *testing.T) {
	s, path, u, acked := fiveCommits(t)
	s.openMax = 1 // the next batch commits bbolt (opentx.go)
	if !s.db.NoSync {
		t.Fatal("the store commits bbolt synced: not between checkpoints")
	}
	record := s.log.next
	var heldAtSync uint64
	var lsnErr error
	s.log.failSync = func(*os.File) error {
		heldAtSync, lsnErr = s.logLSN()
		return syscall.EIO
	}
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("commit: %v, want EIO", err)
	}
	must(t, lsnErr)
	if heldAtSync != record {
		t.Fatalf("at the log's sync bbolt held record %d, want %d (committed during the sync)", heldAtSync, record)
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
