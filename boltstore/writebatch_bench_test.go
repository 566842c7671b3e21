package boltstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// BenchmarkWriteBatch prices the writer's work inside one transaction for a batch shaped like
// the 100,000 timers' firing (docs/performance.md, "Waiting runs"): 128 commits, each on a
// different run of 20,000 picked at random, half firing a timer (two events appended, the
// timer's task deleted, an activity's task put) and half closing the run the half before fired
// (two events, the record rewritten closed, the activity's task deleted); every commit is
// prepared untimed, then validated and applied as the writer does, and the transaction is committed without sync, so
// the figure is CPU and no disk. An op is one batch; pages/batch is what bbolt wrote for it.
//
//	go test -run '^$' -bench WriteBatch -benchtime 300x -count 5 ./boltstore/
func BenchmarkWriteBatch(b *testing.B) {
	const runs, batch = 20000, 128
	db := openPlain(b)
	db.NoSync = true
	recs := make([]history.Run, runs)
	if err := db.Update(func(tx *bolt.Tx) error {
		for i := range recs { // in key order: a quick setup
			u := storetest.Started("wf", fmt.Sprintf("run-%08d", i), t0)
			recs[i] = u.Run
			p, err := prepare(history.Commit{Runs: []history.RunUpdate{u},
				PutTasks: []history.Task{{ID: "t-" + u.Run.RunID, RunID: u.Run.RunID, Kind: history.TaskTimer, AvailableAt: t0}}})
			if err != nil {
				return err
			}
			if err := apply(tx, p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	order := rand.Perm(runs)
	next := 0
	fired := []int{}
	st := db.Stats()
	written := st.TxStats.GetWrite()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		var ps []*prepared
		var closing []int
		closing, fired = fired, nil
		for _, i := range closing {
			u := storetest.Next(recs[i], history.ActivityCompleted, 2)
			u.Run.Status, u.Run.ClosedReason, u.Run.ClosedAt = history.StatusCompleted, history.ClosedCompleted, t0
			recs[i] = u.Run
			ps = append(ps, mustPrepare(b, history.Commit{Runs: []history.RunUpdate{u}, DeleteTasks: []string{"a-" + u.Run.RunID}}))
		}
		for len(ps) < batch {
			if next == runs {
				b.StopTimer()
				b.Fatal("out of runs: lower -benchtime")
			}
			i := order[next]
			next++
			fired = append(fired, i)
			u := storetest.Next(recs[i], history.TimerFired, 2)
			recs[i] = u.Run
			ps = append(ps, mustPrepare(b, history.Commit{Runs: []history.RunUpdate{u},
				DeleteTasks: []string{"t-" + u.Run.RunID},
				PutTasks:    []history.Task{{ID: "a-" + u.Run.RunID, RunID: u.Run.RunID, Kind: history.TaskActivity, AvailableAt: t0}}}))
		}
		b.StartTimer()
		if err := db.Update(func(tx *bolt.Tx) error {
			view := newBatchView(tx)
			for _, p := range ps {
				if err := view.validate(p); err != nil {
					return err
				}
				if err := apply(tx, p); err != nil {
					return err
				}
				view.accept(p)
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	st = db.Stats()
	b.ReportMetric(float64(st.TxStats.GetWrite()-written)/float64(b.N), "pages/batch")
}

func mustPrepare(b *testing.B, c history.Commit) *prepared {
	p, err := prepare(c)
	if err != nil {
		b.Fatal(err)
	}
	return p
}
