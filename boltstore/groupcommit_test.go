package boltstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestGroupCommit: concurrent committers share transactions, and every acknowledged commit is
// there after a reopen.
func TestGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	const runs, steps = 64, 20
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			u := storetest.Started("wf", fmt.Sprintf("r%d", i), t0)
			c := history.Commit{Runs: []history.RunUpdate{u}}
			for range steps + 1 {
				if err := s.Commit(context.Background(), c); err != nil {
					errs <- err
					return
				}
				c = history.Commit{Runs: []history.RunUpdate{storetest.Next(c.Runs[0].Run, history.ActivityCompleted, 1)}}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("commits=%d transactions=%d (%.1f commits per fsync)", st.Commits, st.Transactions, float64(st.Commits)/float64(st.Transactions))
	if want := uint64(runs * (steps + 1)); st.Commits != want {
		t.Fatalf("commits = %d, want %d", st.Commits, want)
	}
	if st.Transactions*2 > st.Commits {
		t.Errorf("%d transactions for %d commits: concurrent commits are not being grouped", st.Transactions, st.Commits)
	}
	must(t, s.Close())

	s = openAt(t, path, Options{})
	for i := range runs {
		id := fmt.Sprintf("r%d", i)
		evs, err := s.Events(id, 0)
		must(t, err)
		r, err := s.Run(id)
		must(t, err)
		if len(evs) != steps+1 || r.LastSeq != steps+1 {
			t.Fatalf("run %s: %d events, last seq %d after reopen; want %d", id, len(evs), r.LastSeq, steps+1)
		}
	}
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %v %v", ps, err)
	}
}

// blockWriter makes the writer's next transaction wait until release is called, so a test can
// queue commits that will share the following transaction. started is closed when the writer
// is blocked.
func blockWriter(s *Store) (started <-chan struct{}, release func()) {
	s.openMax = 1 // every batch commits bbolt, where the hook holds it
	st, rel := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.failCommit = func() error {
		once.Do(func() { close(st); <-rel })
		return nil
	}
	return st, func() { close(rel) }
}

func queueLen(s *Store) int {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return len(s.w.queue)
}

func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); queueLen(s) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("queue never reached %d", n)
		}
	}
}

// TestBatchRejectsAlone: in one shared transaction, a commit with a sequence conflict is
// refused and writes nothing, while the commits around it are written.
func TestBatchRejectsAlone(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	started, release := blockWriter(s)
	first := make(chan error, 1)
	go func() {
		first <- s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r0", t0)}})
	}()
	<-started

	a := storetest.Started("wf", "a", t0)
	a2 := storetest.Next(a.Run, history.TimerFired, 1) // continues a within the same batch
	bad := storetest.Started("wf", "r0", t0)           // r0 exists by then: seq 1 again
	commits := []history.Commit{
		{Runs: []history.RunUpdate{a}},
		{Runs: []history.RunUpdate{bad, storetest.Started("wf", "lost", t0)}, PutTasks: []history.Task{{ID: "x", RunID: "r0"}}},
		{Runs: []history.RunUpdate{a2}},
	}
	results := make([]chan error, len(commits))
	for i, c := range commits {
		results[i] = make(chan error, 1)
		go func() { results[i] <- s.Commit(ctx, c) }()
		waitQueued(t, s, i+1) // keep the queue in this order
	}
	release()
	must(t, <-first)
	must(t, <-results[0])
	if err := <-results[1]; !errors.Is(err, history.ErrSeqConflict) {
		t.Fatalf("conflicting commit: err = %v, want ErrSeqConflict", err)
	}
	must(t, <-results[2])
	if st := s.Stats(); st.Transactions != 2 || st.Commits != 3 || st.Rejected != 1 {
		t.Fatalf("stats %+v, want 2 transactions, 3 commits, 1 rejected", st)
	}
	if _, err := s.Run("lost"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("part of the rejected commit was written: %v", err)
	}
	if ts, _ := s.Tasks(); len(ts) != 0 {
		t.Fatalf("task of the rejected commit was written: %v", ts)
	}
	if evs, _ := s.Events("a", 0); len(evs) != 2 {
		t.Fatalf("run a has %d events, want 2", len(evs))
	}
}

// TestCancelWhileQueued: a commit whose context ends before the writer takes it is dropped,
// and says so; one the writer has taken reports its real outcome.
func TestCancelWhileQueued(t *testing.T) {
	s := openTemp(t)
	started, release := blockWriter(s)
	first := make(chan error, 1)
	go func() {
		first <- s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r0", t0)}})
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		res <- s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r1", t0)}})
	}()
	waitQueued(t, s, 1)
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued commit: err = %v", err)
	}
	release()
	must(t, <-first) // the taken one was written although nothing waits for it any more
	if _, err := s.Run("r1"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("abandoned commit was written: %v", err)
	}
	if _, err := s.Run("r0"); err != nil {
		t.Fatal(err)
	}
}

// TestBadIDs: ids bbolt cannot store are refused before anything is queued.
func TestBadIDs(t *testing.T) {
	s := openTemp(t)
	for name, c := range map[string]history.Commit{
		"empty run id":      {Runs: []history.RunUpdate{storetest.Started("wf", "", t0)}},
		"empty workflow id": {Runs: []history.RunUpdate{storetest.Started("", "r", t0)}},
		// The change feed marks a purge with a 0 byte before the run's id.
		"run id beginning with a 0 byte": {Runs: []history.RunUpdate{storetest.Started("wf", "\x00r", t0)}},
		"empty task id":                  {PutTasks: []history.Task{{RunID: "r"}}},
		"bad event data": {Runs: []history.RunUpdate{func() history.RunUpdate {
			u := storetest.Started("wf", "r", t0)
			u.Events[0].Data = []byte("{")
			return u
		}()}},
	} {
		if err := s.Commit(context.Background(), c); err == nil {
			t.Errorf("%s: commit succeeded", name)
		}
	}
	if st := s.Stats(); st.Transactions != 0 {
		t.Errorf("stats %+v", st)
	}
}
