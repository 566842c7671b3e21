package boltstore

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestOpenTransactionHoldsBatches: between checkpoints, batches that nobody reads share bbolt
// transactions (at most openBatchesMax each), and Close commits the last one: all of them are
// in the file it leaves.
func TestOpenTransactionHoldsBatches(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	const n = 200
	next := stepCommits("r")
	before := s.Stats().BoltCommits
	for range n {
		must(t, s.Commit(context.Background(), next()))
	}
	st := s.Stats()
	if got, most := st.BoltCommits-before, uint64(n/(openBatchesMax-1)+1); got > most || st.Transactions != n {
		t.Fatalf("%d batches took %d bbolt commits, want at most %d (stats %+v)", st.Transactions, got, most, st)
	}
	if !s.hasOpen.Load() {
		t.Fatal("no transaction left open after the last batch")
	}
	must(t, s.Close())
	s = openAt(t, path, Options{NoLog: true})
	if r, err := s.Run("r"); err != nil || r.LastSeq != 2*n-1 {
		t.Fatalf("after Close the run is %+v (%v), want it at %d", r, err, 2*n-1)
	}
}

// TestReadsSeeEveryAnsweredCommit: a read begun after a commit was answered sees it, though
// bbolt has not committed it yet (the read runs inside the open transaction), and reads do not
// make bbolt commit.
func TestReadsSeeEveryAnsweredCommit(t *testing.T) {
	asGiven(t)
	s := openTemp(t)
	next := stepCommits("r")
	must(t, s.Commit(context.Background(), next()))
	boltCommits := s.Stats().BoltCommits
	var acked atomic.Uint64
	acked.Store(1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for range 300 {
			c := next()
			if err := s.Commit(context.Background(), c); err != nil {
				t.Error(err)
				return
			}
			acked.Store(c.Runs[0].Run.LastSeq)
		}
	})
	reads := 0
	for stop := false; !stop; reads++ {
		select {
		case <-done:
			stop = true
		default:
		}
		want := acked.Load()
		r, err := s.Run("r")
		if err != nil || r.LastSeq < want {
			t.Fatalf("read %d: the run is at %d (%v), though %d was answered before the read", reads, r.LastSeq, err, want)
		}
		if evs, err := s.Events("r", want-1); err != nil || len(evs) == 0 || evs[len(evs)-1].Seq < want {
			t.Fatalf("read %d: events after %d: %d (%v)", reads, want-1, len(evs), err)
		}
	}
	wg.Wait()
	if got := s.Stats().BoltCommits; got != boltCommits || !s.hasOpen.Load() {
		t.Fatalf("after %d reads bbolt committed %d times, want none before the checkpoint", reads, got-boltCommits)
	}
}

// TestApplyFailureKeepsTheOpenBatches: a commit whose apply fails in the open transaction is
// refused alone; the answered batches the transaction held are applied again, so the store
// goes on with all of them (here the apply fails on a damaged events bucket of another run).
func TestApplyFailureKeepsTheOpenBatches(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	// A damaged entry where run "bad"'s events slot would go, as damage might leave it.
	must(t, s.settle())
	must(t, s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketRunSlots).Put([]byte("bad"), []byte("x")) }))
	next := stepCommits("a")
	for range 5 {
		must(t, s.Commit(context.Background(), next()))
	}
	if !s.hasOpen.Load() {
		t.Fatal("no transaction open before the failing commit")
	}
	bad := history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "bad", t0)}}
	if err := s.Commit(context.Background(), bad); err == nil || errors.Is(err, history.ErrSeqConflict) || s.Err() != nil {
		t.Fatalf("commit over the damaged bucket: %v (store: %v); want it refused alone", err, s.Err())
	}
	must(t, s.Commit(context.Background(), next()))
	if r, err := s.Run("a"); err != nil || r.LastSeq != 11 {
		t.Fatalf("run a is %+v (%v), want it at 11: the open batches, then one more", r, err)
	}
	must(t, s.Close())
	s = openAt(t, path, Options{})
	if r, err := s.Run("a"); err != nil || r.LastSeq != 11 {
		t.Fatalf("after restart run a is %+v (%v), want it at 11", r, err)
	}
	if _, err := s.Run("bad"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("the refused run: %v, want not found", err)
	}
}

// TestOpenTransactionCommitFailure (docs/reliability.md A5): when bbolt fails to commit a
// checkpoint's transaction, which holds answered batches, the store stops: later commits get
// the error, and the next Open replays the answered ones from the log.
func TestOpenTransactionCommitFailure(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	s.openMax = 3 // two batches kept open, the third checkpoints after its answer
	next := stepCommits("r")
	must(t, s.Commit(context.Background(), next()))
	must(t, s.Commit(context.Background(), next()))
	s.failCommit = func() error { return syscall.EIO }
	must(t, s.Commit(context.Background(), next())) // durable in the log; its checkpoint fails
	if s.Err() == nil {
		t.Fatal("the checkpoint failed and the store goes on")
	}
	if err := s.Commit(context.Background(), next()); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a commit after the failure: %v, want the failure", err)
	}
	if err := s.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close: %v, want the failure", err)
	}
	s = openAt(t, path, Options{})
	if r, err := s.Run("r"); err != nil || r.LastSeq != 5 {
		t.Fatalf("after restart the run is %+v (%v), want it at 5: the three answered batches", r, err)
	}
}

// TestScheduleStatesCommitTheOpenTransaction: PutScheduleStates, which writes bbolt outside the
// log, first commits the open transaction (whose write lock it would otherwise wait for for
// ever) and so makes its checkpoint hold it.
func TestScheduleStatesCommitTheOpenTransaction(t *testing.T) {
	asGiven(t)
	s := openTemp(t)
	next := stepCommits("r")
	for range 3 {
		must(t, s.Commit(context.Background(), next()))
	}
	done := make(chan error, 1)
	go func() { done <- s.PutScheduleStates(map[string][]byte{"nightly": []byte(`{}`)}, nil) }()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("PutScheduleStates did not return with a transaction open")
	}
	if s.hasOpen.Load() {
		t.Fatal("the transaction is still open")
	}
	if r, err := s.Run("r"); err != nil || r.LastSeq != 5 {
		t.Fatalf("the run is %+v (%v), want it at 5", r, err)
	}
}

// TestOpenUntilCommitted: while bbolt commits the transaction that holds answered batches, a
// read must still find it open, or it would read bbolt's state without them and not wait.
func TestOpenUntilCommitted(t *testing.T) {
	asGiven(t)
	s := openTemp(t)
	s.openMax = 2 // the first batch kept open, the second commits both
	next := stepCommits("r")
	must(t, s.Commit(context.Background(), next()))
	var during []bool
	s.failCommit = func() error {
		during = append(during, s.hasOpen.Load())
		return nil
	}
	must(t, s.Commit(context.Background(), next()))
	if len(during) != 1 || !during[0] {
		t.Fatalf("open while bbolt committed: %v, want [true]", during)
	}
	if s.hasOpen.Load() {
		t.Fatal("still open after the commit")
	}
}
