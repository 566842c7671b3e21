package boltstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/testkit/quantile"
)

// BenchmarkPurgeCommitLatency measures what a purge costs the commits a serve makes meanwhile:
// the latency of sequential one-event commits (with the log, the default) on an open run, first
// alone, then while PurgeRuns deletes every closed run of the store. Each iteration builds a
// store of WEND_PURGE_RUNS closed runs (default 100,000; 4 events each) and purges them all.
//
//	go test -run '^$' -bench PurgeCommitLatency -benchtime 1x ./boltstore/
//
// It reports the commits' p50/p99 alone and during the purge (ms), the purge's runs/s, how
// many commits were made during it, and how long selecting every run took (select-ms).
func BenchmarkPurgeCommitLatency(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("WEND_PURGE_RUNS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		b.StopTimer()
		s, err := Open(filepath.Join(b.TempDir(), "wend.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		ids := loadClosedRuns(b, s, n)
		next := appends("open")
		commit := func() time.Duration {
			start := time.Now()
			if err := s.Commit(context.Background(), next()); err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		var alone []time.Duration
		for range 500 {
			alone = append(alone, commit())
		}
		selStart := time.Now()
		cands, err := s.PurgeCandidates(func(history.Run) bool { return true })
		selTook := time.Since(selStart)
		if err != nil || len(cands) != n {
			b.Fatalf("selected %d of %d: %v", len(cands), n, err)
		}
		b.StartTimer()
		var during []time.Duration
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					during = append(during, commit())
				}
			}
		})
		start := time.Now()
		purged, err := s.PurgeRuns(context.Background(), ids, nil)
		took := time.Since(start)
		close(done)
		wg.Wait()
		b.StopTimer()
		if err != nil || len(purged) != n {
			b.Fatalf("purged %d of %d: %v", len(purged), n, err)
		}
		b.ReportMetric(quantile.Millis(alone, 50), "alone-p50-ms")
		b.ReportMetric(quantile.Millis(alone, 99), "alone-p99-ms")
		b.ReportMetric(quantile.Millis(during, 50), "purge-p50-ms")
		b.ReportMetric(quantile.Millis(during, 99), "purge-p99-ms")
		b.ReportMetric(float64(len(during)), "commits-during")
		b.ReportMetric(float64(n)/took.Seconds(), "runs/s")
		b.ReportMetric(float64(selTook.Milliseconds()), "select-ms")
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// loadClosedRuns commits n closed runs of 4 events, all started at t0, and returns their ids.
func loadClosedRuns(tb testing.TB, s *Store, n int) []string {
	return storetest.CommitClosed(tb, s, n, t0, 0)
}
