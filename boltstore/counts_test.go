package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// The started index's key order is GET /v1/runs's order (history.SortRuns), ids that are
// prefixes of one another and times before 1970 included.
func TestStartedKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []string{"a", "ab", "abc", "b", "r1", "r10", "r2", "~", "A"}
	times := []time.Time{{}, time.Unix(-5, 0), time.Unix(0, 0), purgeT0, purgeT0.Add(time.Nanosecond), purgeT0.Add(time.Hour)}
	var runs []history.Run
	for range 200 {
		runs = append(runs, history.Run{RunID: ids[rng.IntN(len(ids))] + ids[rng.IntN(len(ids))], StartedAt: times[rng.IntN(len(times))]})
	}
	want := slices.Clone(runs)
	history.SortRuns(want)
	slices.SortFunc(runs, func(a, b history.Run) int {
		return bytes.Compare(startedKey(a.StartedAt, a.RunID), startedKey(b.StartedAt, b.RunID))
	})
	for i := range runs {
		if runs[i].RunID != want[i].RunID || !runs[i].StartedAt.Equal(want[i].StartedAt) {
			t.Fatalf("at %d: key order has %s@%v, SortRuns %s@%v", i, runs[i].RunID, runs[i].StartedAt, want[i].RunID, want[i].StartedAt)
		}
		tt, id, ok := splitStartedKey(startedKey(runs[i].StartedAt, runs[i].RunID))
		if !ok || id != runs[i].RunID || (!runs[i].StartedAt.IsZero() && !tt.Equal(runs[i].StartedAt)) {
			t.Fatalf("split of %s@%v: %s@%v %v", runs[i].RunID, runs[i].StartedAt, id, tt, ok)
		}
	}
}

// counts reads the run counts, failing the test on an error.
func counts(t *testing.T, s *Store) map[string]map[string]int {
	t.Helper()
	c, err := s.RunCounts()
	must(t, err)
	return c
}

// The counts follow starts, closes and purges, with the log on and off.
func TestRunCountsFollowCommitsAndPurges(t *testing.T) {
	for _, noLog := range []bool{false, true} {
		s := openAt(t, filepath.Join(t.TempDir(), "wend.db"), Options{NoLog: noLog})
		a := startRun(t, s, "alpha", "wa", "ra", "", purgeT0)
		b := startRun(t, s, "alpha", "wb", "rb", "", purgeT0.Add(time.Second))
		startRun(t, s, "beta", "wc", "rc", "", purgeT0.Add(2*time.Second))
		closeRun(t, s, a, history.StatusCompleted, purgeT0.Add(time.Minute), false)
		closeRun(t, s, b, history.StatusFailed, purgeT0.Add(time.Minute), false)
		want := map[string]map[string]int{"alpha": {"completed": 1, "failed": 1}, "beta": {"running": 1}}
		if got := counts(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("noLog=%v: counts %v, want %v", noLog, got, want)
		}
		checkClean(t, s)
		_, err := s.PurgeRuns(context.Background(), []string{"ra"}, nil)
		must(t, err)
		want = map[string]map[string]int{"alpha": {"failed": 1}, "beta": {"running": 1}}
		if got := counts(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("noLog=%v: after the purge, counts %v, want %v", noLog, got, want)
		}
		checkClean(t, s)
	}
}

// A crash before any checkpoint leaves bbolt without the commits; the log's replay at Open
// brings the counts and the started index back with the records.
func TestRunCountsAfterReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	must(t, s.settle())
	db, err := os.ReadFile(path) // bbolt as the crash leaves it: no run
	must(t, err)
	s.holdCheckpoints = true
	a := startRun(t, s, "alpha", "wa", "ra", "", purgeT0)
	startRun(t, s, "alpha", "wb", "rb", "", purgeT0.Add(time.Second))
	closeRun(t, s, a, history.StatusCompleted, purgeT0.Add(time.Minute), false)
	crash := filepath.Join(t.TempDir(), "wend.db")
	must(t, os.WriteFile(crash, db, 0o600))
	must(t, os.Mkdir(walDir(crash), 0o700))
	names, err := os.ReadDir(walDir(path))
	must(t, err)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(walDir(path), n.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(walDir(crash), n.Name()), b, 0o600))
	}
	must(t, s.Close())

	r := openAt(t, crash, Options{})
	want := map[string]map[string]int{"alpha": {"completed": 1, "running": 1}}
	if got := counts(t, r); !reflect.DeepEqual(got, want) {
		t.Fatalf("after replay, counts %v, want %v", got, want)
	}
	checkClean(t, r)
	runs, _, _, end, ok, err := r.RunsNewest(time.Time{}, "", 10, 10, func(history.Run) bool { return true })
	must(t, err)
	if !ok || !end || !slices.Equal(runIDsOf(runs), []string{"rb", "ra"}) {
		t.Fatalf("after replay, newest runs %v end=%v ok=%v", runIDsOf(runs), end, ok)
	}
}

// A database without the derived buckets (written before they existed) gets them, right, at
// its first Open for writing; opened for reading before that, it counts from the records.
func TestReadIndexesBuiltAtOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	a := startRun(t, s, "alpha", "wa", "ra", "", purgeT0)
	startRun(t, s, "beta", "wb", "rb", "", purgeT0.Add(time.Second))
	closeRun(t, s, a, history.StatusCompleted, purgeT0.Add(time.Minute), false)
	must(t, s.Close())
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		must(t, tx.DeleteBucket(bucketCounts))
		return tx.DeleteBucket(bucketStarted)
	}))
	must(t, db.Close())
	want := map[string]map[string]int{"alpha": {"completed": 1}, "beta": {"running": 1}}

	ro := openAt(t, path, Options{ReadOnly: true})
	if got := counts(t, ro); !reflect.DeepEqual(got, want) {
		t.Fatalf("read only, counts %v, want %v", got, want)
	}
	if _, _, _, _, ok, err := ro.RunsNewest(time.Time{}, "", 10, 10, func(history.Run) bool { return true }); ok || err != nil {
		t.Fatalf("read only without the index: ok=%v err=%v, want false, nil", ok, err)
	}
	must(t, ro.Close())

	rw := openAt(t, path, Options{})
	if got := counts(t, rw); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Open, counts %v, want %v", got, want)
	}
	checkClean(t, rw)
}

// Check finds a count or a started entry that disagrees with the records.
func TestCheckReportsReadIndexes(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(tx *bolt.Tx) error
		want   string
	}{
		{"count off", func(tx *bolt.Tx) error {
			k := countKey("alpha", "running")
			return tx.Bucket(bucketCounts).Put(k, frame(k, []byte{5}))
		}, `run counts: workflow "alpha", status running: counts 5 run(s), 1 stored (wend repair rebuilds it)`},
		{"count of nothing", func(tx *bolt.Tx) error {
			k := countKey("ghost", "failed")
			return tx.Bucket(bucketCounts).Put(k, frame(k, []byte{1}))
		}, `run counts: workflow "ghost", status failed: counts 1 run(s), none stored (wend repair rebuilds it)`},
		{"count damaged", func(tx *bolt.Tx) error {
			k := countKey("alpha", "running")
			return tx.Bucket(bucketCounts).Put(k, []byte{1, 2, 3, 4, 5, 1})
		}, "run counts: count 05616c70686172756e6e696e67 is damaged (wend repair rebuilds it)"},
		{"entry missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStarted).Delete(startedKey(purgeT0, "ra"))
		}, `started index: run "ra" is missing (wend repair rebuilds it)`},
		{"entry of nothing", func(tx *bolt.Tx) error {
			k := startedKey(purgeT0, "ghost")
			return tx.Bucket(bucketStarted).Put(k, indexEntry(k))
		}, `started index: entry for run "ghost" matches no run record (wend repair rebuilds it)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wend.db")
			s, err := Open(path, Options{})
			must(t, err)
			startRun(t, s, "alpha", "wa", "ra", "", purgeT0)
			must(t, s.Close())
			db, err := bolt.Open(path, 0o600, nil)
			must(t, err)
			must(t, db.Update(c.tamper))
			must(t, db.Close())
			s = openAt(t, path, Options{})
			ps, err := s.Check()
			must(t, err)
			if !slices.Contains(ps, c.want) {
				t.Fatalf("check: %q, want %q among them", ps, c.want)
			}
			fixed, err := s.RepairIndexes()
			must(t, err)
			want := strings.TrimSuffix(c.want, repairHint) + ": rebuilt from the run records"
			if !slices.Contains(fixed, want) || len(fixed) != len(ps) {
				t.Fatalf("repair says %q, want %q among %d lines", fixed, want, len(ps))
			}
			checkClean(t, s)
			if fixed, err := s.RepairIndexes(); err != nil || fixed != nil {
				t.Fatalf("a second repair: %q %v", fixed, err)
			}
		})
	}
}

// Paging through RunsNewest, a few runs per read, lists what Runs lists, in its order, and
// keep filters without ending the paging early.
func TestRunsNewestPagesInListOrder(t *testing.T) {
	s := openTemp(t)
	for i := range 40 {
		r := startRun(t, s, "alpha", "w"+string(rune('a'+i%7)), "r"+string(rune('A'+i)), "", purgeT0.Add(time.Duration(i%5)*time.Second))
		if i%3 == 0 {
			closeRun(t, s, r, history.StatusCompleted, purgeT0.Add(time.Hour), false)
		}
	}
	for _, st := range []string{"", history.StatusCompleted} {
		want, err := s.Runs(history.RunFilter{Status: st})
		must(t, err)
		var got []history.Run
		afterT, afterID := time.Time{}, ""
		for reads := 0; ; reads++ {
			if reads > 40 {
				t.Fatal("paging does not end")
			}
			runs, lt, lid, end, ok, err := s.RunsNewest(afterT, afterID, 3, 2, func(r history.Run) bool { return st == "" || r.Status == st })
			must(t, err)
			if !ok || len(runs) > 2 {
				t.Fatalf("read %d: ok=%v, %d runs for a want of 2", reads, ok, len(runs))
			}
			got = append(got, runs...)
			if end {
				break
			}
			afterT, afterID = lt, lid
		}
		if !slices.Equal(runIDsOf(got), runIDsOf(want)) {
			t.Fatalf("status %q: paged %v, Runs %v", st, runIDsOf(got), runIDsOf(want))
		}
	}
}

// The change feed names each run changed since a position once, and says when it forgot.
func TestChangedRuns(t *testing.T) {
	s := openTemp(t)
	_, p0, complete := s.ChangedRuns(0)
	if !complete || p0 != 0 {
		t.Fatalf("new store: at %d, complete %v", p0, complete)
	}
	a := startRun(t, s, "alpha", "wa", "ra", "", purgeT0)
	startRun(t, s, "alpha", "wb", "rb", "", purgeT0)
	closeRun(t, s, a, history.StatusCompleted, purgeT0.Add(time.Minute), false)
	ids, p1, complete := s.ChangedRuns(p0)
	if !complete || !slices.Equal(ids, []string{"ra", "rb"}) {
		t.Fatalf("after commits: %v complete %v", ids, complete)
	}
	_, err := s.PurgeRuns(context.Background(), []string{"ra"}, nil)
	must(t, err)
	if ids, _, _ := s.ChangedRuns(p1); !slices.Equal(ids, []string{"ra"}) {
		t.Fatalf("after the purge: %v", ids)
	}
	if ids, _, complete := s.PurgedRuns(p0); !complete || !slices.Equal(ids, []string{"ra"}) {
		t.Fatalf("purged after the first position: %v complete %v, want [ra]", ids, complete)
	}
	if ids, _, _ := s.PurgedRuns(p1 + 1); len(ids) != 0 {
		t.Fatalf("purged after the purge: %v, want none", ids)
	}
	if _, _, complete := s.ChangedRuns(1 << 40); complete {
		t.Fatal("a position past the feed's reads as complete")
	}
	must(t, s.updateOutsideLog(func(tx *bolt.Tx) error {
		for i := range changeFeedMax + 1 {
			if err := noteChange(tx, []byte(fmt.Sprint("x", i)), false); err != nil {
				return err
			}
		}
		return nil
	}))
	if _, _, complete := s.ChangedRuns(p1); complete {
		t.Fatal("a position older than the feed remembers reads as complete")
	}
}

// The change feed lasts across processes: a position taken before a Close, or before a kill
// (the log's replay writes the feed again), names the runs changed after it, and only those.
func TestChangedRunsAcrossOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	startRun(t, s, "alpha", "wa", "ra", "", purgeT0)
	_, p0, _ := s.ChangedRuns(0)
	startRun(t, s, "alpha", "wb", "rb", "", purgeT0)
	must(t, s.Close())
	s = openAt(t, path, Options{})
	if ids, p1, complete := s.ChangedRuns(p0); !complete || !slices.Equal(ids, []string{"rb"}) || p1 != p0+1 {
		t.Fatalf("after reopening: %v at %d complete %v, want [rb] at %d", ids, p1, complete, p0+1)
	}
}

// A read made while a purge batch is being written returns without waiting for the batch,
// even when commits were answered just before it (the log's open transaction, which reads
// would otherwise have to wait for under the writer's lock); a commit made meanwhile waits for
// the batch and lands after it.
func TestReadsRunBesidePurgeBatch(t *testing.T) {
	s := openTemp(t)
	a := startRun(t, s, "alpha", "wa", "ra", "", purgeT0)
	closeRun(t, s, a, history.StatusCompleted, purgeT0.Add(time.Minute), false)
	b := startRun(t, s, "alpha", "wb", "rb", "", purgeT0.Add(time.Second)) // answered: in the open transaction
	if !s.hasOpen.Load() {
		t.Fatal("no transaction open before the purge: the test would not test the lock")
	}
	committed := make(chan error, 1)
	read := make(chan error, 1)
	old := testHookPurge
	t.Cleanup(func() { testHookPurge = old })
	testHookPurge = func(string) {
		testHookPurge = func(string) {}
		go func() {
			_, err := s.Run("rb")
			read <- err
		}()
		select {
		case err := <-read:
			must(t, err)
		case <-time.After(time.Minute):
			t.Error("a read waited for the purge batch")
		}
		go func() {
			n := storetest.Next(b, history.ActivityCompleted, 1)
			committed <- s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{n}})
		}()
		select {
		case err := <-committed:
			t.Errorf("a commit went through during the purge batch: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	purged, err := s.PurgeRuns(context.Background(), []string{"ra"}, nil)
	must(t, err)
	if len(purged) != 1 {
		t.Fatalf("purged %v", runIDsOf(purged))
	}
	must(t, <-committed)
	r, err := s.Run("rb")
	must(t, err)
	if r.LastSeq != b.LastSeq+1 {
		t.Fatalf("rb at seq %d after the commit, want %d", r.LastSeq, b.LastSeq+1)
	}
	checkClean(t, s)
}

// Check's list of run ids, read in slices, holds every run once across slice boundaries.
func TestRunIDsInSlices(t *testing.T) {
	s := openTemp(t)
	var c history.Commit
	n := 2*keySliceLen + 3
	for i := range n {
		id := fmt.Sprintf("r%06d", i)
		c.Runs = append(c.Runs, storetest.Started("w"+id, id, purgeT0))
	}
	must(t, s.Commit(context.Background(), c))
	ids, bad, err := s.runIDs()
	must(t, err)
	if len(bad) > 0 {
		t.Fatalf("bad event keys: %v", bad)
	}
	if len(ids) != n || !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != n {
		t.Fatalf("%d ids of %d runs (sorted %v)", len(ids), n, slices.IsSorted(ids))
	}
}

// One run's tasks, read in slices across slice boundaries, are the ones Tasks names for it.
func TestTasksOfRun(t *testing.T) {
	s := openTemp(t)
	var c history.Commit
	for i := range taskScanChunk + 10 {
		run := []string{"ra", "rb"}[i%2]
		c.PutTasks = append(c.PutTasks, history.Task{ID: fmt.Sprintf("t%05d", i), RunID: run, Kind: history.TaskTimer,
			AvailableAt: purgeT0.Add(time.Duration(i%13) * time.Second)})
	}
	must(t, s.Commit(context.Background(), c))
	all, err := s.Tasks()
	must(t, err)
	got, err := s.TasksOfRun("rb")
	must(t, err)
	want := slices.DeleteFunc(all, func(t history.Task) bool { return t.RunID != "rb" })
	if !reflect.DeepEqual(got, want) || len(got) != (taskScanChunk+10)/2 {
		t.Fatalf("%d tasks of rb, Tasks names %d", len(got), len(want))
	}
}
