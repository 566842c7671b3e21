package boltstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestCommitErrorIsFatal (docs/reliability.md A5, injected): after one failed commit (EIO where the
// fsync would be), the error surfaces from that Commit, from Err, from every later call and from
// Close; nothing more is written; a restart resumes from the last acknowledged commit.
func TestCommitErrorIsFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	s.openMax = 1 // every batch commits bbolt: failCommit counts batches
	const failAt = 5
	n, injected := 0, 0
	s.failCommit = func() error {
		if n++; n >= failAt {
			injected++
			return syscall.EIO
		}
		return nil
	}
	ctx := context.Background()
	u := storetest.Started("wf", "r1", t0)
	acked := uint64(0)
	failed, writesAfter := 0, 0
	for i := range 10 {
		err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}})
		switch {
		case err == nil && failed > 0:
			writesAfter++
		case err == nil:
			acked = u.Run.LastSeq
		case !errors.Is(err, syscall.EIO):
			t.Fatalf("commit %d: %v, want it to wrap EIO", i, err)
		default:
			failed++
		}
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
	}
	if !errors.Is(s.Err(), syscall.EIO) {
		t.Fatalf("Err() = %v", s.Err())
	}
	if _, err := s.Events("r1", 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("read after the failure: %v, want the failure", err)
	}
	if err := s.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close() = %v, want the failure", err)
	}
	if n != failAt {
		t.Fatalf("the writer tried %d transactions, want %d: it kept writing after the failure", n, failAt)
	}

	s = openAt(t, path, Options{})
	r, err := s.Run("r1")
	must(t, err)
	restartOK := 0
	if r.LastSeq == acked {
		restartOK = 1
	} else {
		t.Errorf("after restart the run ends at %d, want the last acknowledged %d", r.LastSeq, acked)
	}
	commitRun(t, s, storetest.Next(r, history.ActivityCompleted, 1))
	fmt.Printf("RELIABILITY suite=boltstore-commit-error injected_errors=%d refused_after_error=%d writes_after_error=%d restarts_ok=%d\n",
		injected, failed-injected, writesAfter, restartOK)
	if writesAfter > 0 {
		t.Fatalf("%d commits succeeded after the failure", writesAfter)
	}
}

// TestMaxSizeIsFatal (docs/reliability.md A5, real): a database that reaches Options.MaxSize
// fails the commit with bbolt's ErrMaxSizeReached, which stops the store like any commit error,
// and what was acknowledged before is intact.
func TestMaxSizeIsFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	opts := Options{InitialMmapSize: 1 << 20, MaxSize: 1 << 20}
	s, err := Open(path, opts)
	must(t, err)
	ctx := context.Background()
	u := storetest.Started("wf", "r1", t0)
	acked := uint64(0)
	var failure error
	for range 1000 {
		err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}})
		if err != nil {
			failure = err
			break
		}
		acked = u.Run.LastSeq
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(20_000)
	}
	if !errors.Is(failure, berrors.ErrMaxSizeReached) {
		t.Fatalf("commit error %v, want ErrMaxSizeReached", failure)
	}
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r2", t0)}}); !errors.Is(err, berrors.ErrMaxSizeReached) {
		t.Fatalf("commit after the failure: %v", err)
	}
	s.Close()

	s = openAt(t, path, Options{})
	r, err := s.Run("r1")
	must(t, err)
	if r.LastSeq != acked {
		t.Fatalf("after restart run ends at %d, want %d", r.LastSeq, acked)
	}
	if _, err := s.Run("r2"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("a commit after the failure was written: %v", err)
	}
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %v %v", ps, err)
	}
}
