package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// benchFlow is a spec text of the size a small workflow's is, recorded in each WorkflowStarted.
const benchFlow = "wend: v1\nname: order\nplugins: {p: ./p}\nsteps:\n  - {id: a, activity: p.echo, with: {order: \"${{ input.order }}\"}}\n  - {id: shipped, wait_for_signal: shipped, timeout: 72h}\n  - {activity: p.echo, with: \"${{ steps.shipped.output }}\"}\n"

// waitingRunCommit is a commit of n runs as the idle bench leaves them waiting: a start with its
// spec text, an activity scheduled and completed, a timer; about 1.3 KB of events a run, run
// ids random as the engine's.
func waitingRunCommit(from, n int) history.Commit {
	var c history.Commit
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("%016x", uint64(i+1)*0x9e3779b97f4a7c15)
		wf := "o" + strconv.Itoa(i)
		st := history.Started{WorkflowID: wf, RunID: id, Input: json.RawMessage(fmt.Sprintf(`{"order":%d}`, i)),
			SpecFile: "/srv/flows/order.wend.yaml", SpecSource: benchFlow}
		evs := []history.Event{{Seq: 1, Type: history.WorkflowStarted, Time: t0, Data: history.MustData(st)},
			{Seq: 2, Type: history.ActivityScheduled, Time: t0, Step: "steps[0]", Data: json.RawMessage(fmt.Sprintf(`{"plugin":"p","activity":"echo","input":{"order":%d},"tries":1}`, i))},
			{Seq: 3, Type: history.ActivityCompleted, Time: t0, Step: "steps[0]", Data: json.RawMessage(`{"output":{}}`)},
			{Seq: 4, Type: history.TimerScheduled, Time: t0, Step: "steps[1]", Data: json.RawMessage(`{"timer_id":"steps[1]#timeout","fire_at":"2026-01-05T03:04:05Z","purpose":"timeout","signal":"shipped"}`)}}
		r := history.Run{WorkflowID: wf, RunID: id, Name: "order", Status: history.StatusRunning, StartedAt: t0, LastSeq: 4}
		c.Runs = append(c.Runs, history.RunUpdate{Run: r, Events: evs})
	}
	return c
}

// toSchemaOne rewrites a closed database at path into the layout of schema 1: every run's
// events a bucket of their own, no shared bucket, no slots (doc.go). The test that opens the
// fixture written by the store of schema 1 (TestOpenSchemaOneFile) is what ties this layout to
// that store's.
func toSchemaOne(tb testing.TB, path string) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for done := false; !done; {
		err := db.Update(func(tx *bolt.Tx) error {
			slots, eb := tx.Bucket(bucketRunSlots), tx.Bucket(bucketEvents)
			c := slots.Cursor()
			n := 0
			var ids [][]byte
			for k, _ := c.Seek(nil); k != nil && n < 10_000; k, _ = c.Next() {
				ids = append(ids, bytes.Clone(k))
				n++
			}
			for _, id := range ids {
				re, err := findEvents(tx, id)
				if err != nil {
					return err
				}
				own, err := eb.CreateBucket(id)
				if err != nil {
					return err
				}
				own.FillPercent = 1
				ec := re.cursor()
				for k, v := ec.seek(nil); k != nil; k, v = ec.next() {
					if err := own.Put(bytes.Clone(k), bytes.Clone(v)); err != nil {
						return err
					}
				}
				if err := deleteShared(tx, id, re); err != nil {
					return err
				}
			}
			if len(ids) > 0 {
				return nil
			}
			done = true
			if err := tx.DeleteBucket(bucketRunSlots); err != nil {
				return err
			}
			if err := tx.DeleteBucket(bucketRunEvents); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(keySchema, []byte(schemaOwnOnly))
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkUpgrade prices the upgrade from schema 1 of a file of WEND_UPGRADE_RUNS waiting
// runs (default 100,000; 4 events, about 1.3 KB, each): the writing Open that runs it, its
// CPU and transactions, the file before and after (bbolt does not shrink a file: the pages the
// upgrade freed are reused), and the same file after a Compact.
//
//	go test -run '^$' -bench Upgrade -benchtime 1x ./boltstore/
func BenchmarkUpgrade(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("WEND_UPGRADE_RUNS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "wend.db")
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += 500 {
			if err := s.Commit(context.Background(), waitingRunCommit(i, min(500, n-i))); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		toSchemaOne(b, path)
		before, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		var last UpgradeProgress
		txs := 0
		cpu0 := processCPU()
		b.StartTimer()
		t0 := time.Now()
		s, err = Open(path, Options{UpgradeProgress: func(p UpgradeProgress) { last, txs = p, txs+1 }})
		took := time.Since(t0)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		cpu := processCPU() - cpu0
		if last.Moved != n {
			b.Fatalf("moved %d of %d runs", last.Moved, n)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		after, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Compact(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(took.Seconds(), "open-s")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(txs), "transactions")
		b.ReportMetric(float64(before.Size())/1e6, "file-before-MB")
		b.ReportMetric(float64(after.Size())/1e6, "file-after-MB")
		b.ReportMetric(float64(res.After)/1e6, "compacted-MB")
	}
}
