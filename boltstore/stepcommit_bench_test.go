package boltstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"testing"

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

// BenchmarkStepCommitCPU prices the CPU of a sequential step's commit through the store with
// its log (the default). On tmpfs (/dev/shm) neither sync reaches a disk, as an fdatasync there
// returns at once: what is left is the caller's path: prepare, the writer, Begin, validate,
// apply, the log's encoding and write, and the checkpoints' bbolt commits. On disk (the
// temporary folder, WEND_BENCH_DISK_DIR to choose another) the same commits are synced, so the
// kernel's part of a durable write counts too: the record's write, its sync, the check that the
// segment is still linked, the spares' filling. cpu-ns/op is the process's CPU time; on a loaded
// machine it moves less than the wall time. The store is warmed past its first checkpoints
// first.
//
//	go test -run '^$' -bench StepCommitCPU -benchtime 20000x -benchmem ./boltstore/
func BenchmarkStepCommitCPU(b *testing.B) {
	b.Run("tmpfs", func(b *testing.B) {
		dir, err := os.MkdirTemp("/dev/shm", "wend-bench-")
		if err != nil {
			b.Skipf("no tmpfs at /dev/shm: %v", err)
		}
		defer os.RemoveAll(dir)
		benchStepCommits(b, dir)
	})
	b.Run("disk", func(b *testing.B) {
		dir, err := os.MkdirTemp(os.Getenv("WEND_BENCH_DISK_DIR"), "wend-bench-")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		benchStepCommits(b, dir)
	})
}

func benchStepCommits(b *testing.B, dir string) {
	s, err := Open(filepath.Join(dir, "wend.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	next := stepCommits("r")
	for range 4 * openBatchesMax {
		if err := s.Commit(ctx, next()); err != nil {
			b.Fatal(err)
		}
	}
	before := s.checkpoints.Load()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for range b.N {
		if err := s.Commit(ctx, next()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(s.checkpoints.Load()-before)*1000/float64(b.N), "checkpoints/1k")
	if fi, err := os.Stat(filepath.Join(dir, "wend.db")); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	}
}
