package boltstore

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// BenchmarkApplySmallRuns prices the CPU of a commit to one of many short runs, the shape of
// runs that start and wait: run after run (ids random, as the engine makes them) a start and
// three single-event steps, each commit its own bbolt transaction committed without sync.
//
//	go test -run '^$' -bench ApplySmallRuns -benchtime 40000x -count 5 ./boltstore/
func BenchmarkApplySmallRuns(b *testing.B) {
	db := openPlain(b)
	db.NoSync = true
	var run history.Run
	next := func(i int) history.Commit {
		if i%4 == 0 {
			id := fmt.Sprintf("%016x", uint64(i/4+1)*0x9e3779b97f4a7c15)
			u := storetest.Started("wf-"+id, id, t0)
			run = u.Run
			return history.Commit{Runs: []history.RunUpdate{u}}
		}
		u := storetest.Next(run, history.ActivityCompleted, 1)
		run = u.Run
		return history.Commit{Runs: []history.RunUpdate{u}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p, err := prepare(next(i))
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error { return apply(tx, p) }); err != nil {
			b.Fatal(err)
		}
	}
}
