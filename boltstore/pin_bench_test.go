package boltstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// stepCommits yields successive commits shaped like a sequential step's: the outcome and the
// next schedule appended to run id, the next attempt's task put (dispatched) and the last one's
// deleted.
func stepCommits(id string) func() history.Commit {
	r := storetest.Started("wf", id, t0)
	n := 0
	return func() history.Commit {
		n++
		c := history.Commit{}
		if n > 1 {
			r = storetest.Next(r.Run, history.ActivityCompleted, 2)
			r.Events[0].Data = []byte(`{"output":{"ok":true,"id":"0123456789abcdef"}}`)
			r.Events[1].Type = history.ActivityScheduled
			r.Events[1].Data = []byte(`{"activity_execution_id":"x","activity":"p.echo","input":{"i":1},"attempt":1}`)
			c.DeleteTasks = []string{fmt.Sprintf("%s/a%d/1", id, n-1)}
		}
		c.Runs = []history.RunUpdate{r}
		c.PutTasks = []history.Task{{ID: fmt.Sprintf("%s/a%d/1", id, n), RunID: id, Kind: history.TaskActivity,
			AvailableAt: t0, Data: []byte(`{"step":"s1","input":{"i":1}}`), Dispatched: true}}
		return c
	}
}

// BenchmarkBeginUnderPin prices bbolt's Begin(true) as the store runs it under its checkpoint
// pin: each commit begins a write transaction, applies a step's commit and commits without
// sync, and every `every` commits the pin is let go and taken again at the state just committed,
// as a checkpoint does (pin.go). Under the pin, bbolt keeps each transaction that freed a page
// of the pinned state in its pending list and walks that list at every Begin(true). The median
// Begin is reported for commits 1–64 after a checkpoint and for the last 64 before the next,
// the mean Begin and whole commit over every commit, and the most pages bbolt held pending at
// a commit's end (the warm-up's first interval, a new database's, is not timed).
//
//	go test -run '^$' -bench BeginUnderPin -benchtime 20000x ./boltstore/
func BenchmarkBeginUnderPin(b *testing.B) {
	for _, every := range []int{0, 64, 128, 256, 512, 1024} {
		b.Run(fmt.Sprintf("every=%d", every), func(b *testing.B) { benchBeginUnderPin(b, every) })
	}
}

// benchBeginUnderPin runs with a pin retaken every `every` commits; 0 is without a pin (the
// store without its log).
func benchBeginUnderPin(b *testing.B, every int) {
	db := openPlain(b)
	db.NoSync = true
	next := stepCommits("r")
	pinAt := func() {}
	if every > 0 {
		pin, err := db.Begin(false)
		if err != nil {
			b.Fatal(err)
		}
		pinAt = func() {
			pin.Rollback()
			if pin, err = db.Begin(false); err != nil {
				b.Fatal(err)
			}
		}
		defer func() { pin.Rollback() }()
	}
	commit := func() (begin, total time.Duration) {
		p, err := prepare(next())
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		tx, err := db.Begin(true)
		if err != nil {
			b.Fatal(err)
		}
		begun := time.Now()
		if err := apply(tx, p); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		return begun.Sub(start), time.Since(start)
	}
	// Warm: the intervals before have freed the pages this one reuses, as in a store past its
	// first checkpoints.
	for i := range 3 * max(every, 256) {
		commit()
		if every > 0 && (i+1)%every == 0 {
			pinAt()
		}
	}
	var early, late []time.Duration
	var begins, totals time.Duration
	maxPending := 0
	b.ResetTimer()
	for i := range b.N {
		begin, total := commit()
		begins += begin
		if pp := db.Stats().PendingPageN; pp > maxPending {
			maxPending = pp
		}
		totals += total
		k := i % max(every, 1)
		switch {
		case every == 0 || k < 64:
			early = append(early, begin)
		case k >= every-64:
			late = append(late, begin)
		}
		if every > 0 && k == every-1 {
			pinAt()
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(begins.Nanoseconds())/n, "begin-ns/op")
	b.ReportMetric(float64(totals.Nanoseconds())/n, "commit-ns/op")
	b.ReportMetric(float64(median(early).Nanoseconds()), "begin-first64-ns")
	if len(late) > 0 {
		b.ReportMetric(float64(median(late).Nanoseconds()), "begin-last64-ns")
	}
	b.ReportMetric(float64(maxPending), "max-pending-pages")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkStepCommitCPU prices the CPU of a sequential step's commit through the store with
// its log (the default), with neither sync reaching a disk: the store lives on tmpfs
// (/dev/shm), where an fdatasync returns at once. What is left is the caller's path: prepare,
// the writer, Begin, validate, apply, the log's encoding and write, bbolt's commit, and the
// checkpoints in the background (cpu-ns/op is the process's CPU time, those included; on a
// loaded machine it moves less than the wall time). The store is warmed past its first
// checkpoints first.
//
//	go test -run '^$' -bench StepCommitCPU -benchtime 20000x -benchmem ./boltstore/
func BenchmarkStepCommitCPU(b *testing.B) {
	dir, err := os.MkdirTemp("/dev/shm", "wend-bench-")
	if err != nil {
		b.Skipf("no tmpfs at /dev/shm: %v", err)
	}
	defer os.RemoveAll(dir)
	s, err := Open(filepath.Join(dir, "wend.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	next := stepCommits("r")
	for range 4 * checkpointEvery {
		if err := s.Commit(ctx, next()); err != nil {
			b.Fatal(err)
		}
	}
	checkpoints := func() int {
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
		return s.ckpt.runs
	}
	before := checkpoints()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for range b.N {
		if err := s.Commit(ctx, next()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(checkpoints()-before)*1000/float64(b.N), "checkpoints/1k")
	if fi, err := os.Stat(filepath.Join(dir, "wend.db")); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	}
}
