package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// BenchmarkCommit measures a commit of one appended event through the store, sequentially and
// with 8 and 64 concurrent committers on their own runs. Fsync latency on a shared machine
// drifts by several times within a minute, so the sequential case interleaves each store commit
// with a plain synced bbolt Update of the same bytes on the same options and reports both and
// their ratio; the concurrent cases report commits/s and how many commits shared each fsync.
//
//	go test -run '^$' -bench Commit -benchtime 2000x ./boltstore/
//
// sequential and the concurrent cases run with Options.NoLog; sequential-log is the sequential
// case with the log (the default), each commit against a synced append of
// its record's bytes to a plain file.
func BenchmarkCommit(b *testing.B) {
	b.Run("sequential", benchSequential)
	b.Run("sequential-log", benchSequentialLog)
	b.Run("concurrent-8", func(b *testing.B) { benchConcurrent(b, 8) })
	b.Run("concurrent-64", func(b *testing.B) { benchConcurrent(b, 64) })
}

// appends yields successive one-event commits of run id.
func appends(id string) func() history.Commit {
	r := storetest.Started("wf", id, t0)
	first := true
	return func() history.Commit {
		if first {
			first = false
		} else {
			r = storetest.Next(r.Run, history.ActivityCompleted, 1)
			r.Events[0].Data = []byte(`{"output":{"ok":true,"id":"0123456789abcdef"}}`)
		}
		return history.Commit{Runs: []history.RunUpdate{r}}
	}
}

func benchSequential(b *testing.B) {
	db := openPlain(b)
	s, err := Open(filepath.Join(b.TempDir(), "wend.db"), Options{NoLog: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	nextPlain, nextStore := appends("r"), appends("r")
	var plain, store time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		p, err := prepare(nextPlain())
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error { return apply(tx, p) }); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := s.Commit(ctx, nextStore()); err != nil {
			b.Fatal(err)
		}
		plain, store = plain+mid.Sub(start), store+time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-update-ns/op")
	b.ReportMetric(float64(store.Nanoseconds())/n, "store-commit-ns/op")
	b.ReportMetric(float64(store)/float64(plain), "store/plain")
}

// benchSequentialLog is benchSequential with the log (the default), against its own floor: a synced append
// of the record's size to a plain file (plainLog), interleaved the same way.
func benchSequentialLog(b *testing.B) {
	asGiven(b)
	dir := b.TempDir()
	floor, err := openPlainLog(filepath.Join(dir, "plain.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer floor.Close()
	s, err := Open(filepath.Join(dir, "wend.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	next := appends("r")
	var plain, store time.Duration
	b.ResetTimer()
	for range b.N {
		c := next()
		p, err := prepare(c)
		if err != nil {
			b.Fatal(err)
		}
		rec := encodeBatch(nil, []*prepared{p})
		start := time.Now()
		if err := floor.Append(rec); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := s.Commit(ctx, c); err != nil {
			b.Fatal(err)
		}
		plain, store = plain+mid.Sub(start), store+time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-append-ns/op")
	b.ReportMetric(float64(store.Nanoseconds())/n, "store-commit-ns/op")
	b.ReportMetric(float64(store)/float64(plain), "store/append")
}

// openPlain is a bbolt file with the store's options and buckets, written to directly.
func openPlain(b *testing.B) *bolt.DB {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "plain.db"), 0o600,
		boltOptions(Options{InitialMmapSize: DefaultInitialMmapSize}, true))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return db
}

func benchConcurrent(b *testing.B, writers int) {
	s, err := Open(filepath.Join(b.TempDir(), "wend.db"), Options{NoLog: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	start := time.Now()
	for w := range writers {
		n := b.N / writers
		if w < b.N%writers {
			n++
		}
		wg.Go(func() {
			next := appends(fmt.Sprintf("r%d", w))
			for range n {
				if err := s.Commit(ctx, next()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	st := s.Stats()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(st.Commits)/float64(max(st.Transactions, 1)), "commits/tx")
}

// BenchmarkApplyStep prices the CPU of one sequential step's commit in the store: prepare (the
// run record and the event encoded) and apply (the record compared with the stored one, the
// event put) in a bbolt transaction committed without sync, so the disk does not drown it.
//
//	go test -run '^$' -bench ApplyStep -benchtime 20000x -count 5 ./boltstore/
func BenchmarkApplyStep(b *testing.B) {
	db := openPlain(b)
	db.NoSync = true
	next := appends("r")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p, err := prepare(next())
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error { return apply(tx, p) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareStep prices encoding one sequential step's commit (the run record and the
// event), the part of BenchmarkApplyStep that runs in the committing caller.
//
//	go test -run '^$' -bench PrepareStep -benchtime 200000x -count 5 ./boltstore/
func BenchmarkPrepareStep(b *testing.B) {
	next := appends("r")
	b.ReportAllocs()
	for range b.N {
		if _, err := prepare(next()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareStepTask is BenchmarkPrepareStep for a commit shaped like an engine step's
// (stepCommits): two events, the run record, a task put and one deleted.
//
//	go test -run '^$' -bench PrepareStepTask -benchtime 200000x -count 5 ./boltstore/
func BenchmarkPrepareStepTask(b *testing.B) {
	next := stepCommits("r")
	cs := make([]history.Commit, b.N)
	for i := range cs {
		cs[i] = next()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := prepare(cs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenCommitClose measures the life of a short-lived store, as `wend run` has one: Open
// of a new database with the log (its first segment filled), one commit, Close.
//
//	go test -run '^$' -bench OpenCommitClose -benchtime 50x ./boltstore/
func BenchmarkOpenCommitClose(b *testing.B) {
	b.Setenv(logFromEnv, "")
	dir := b.TempDir()
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		s, err := Open(filepath.Join(dir, fmt.Sprintf("%d.db", i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(ctx, appends("r")()); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
