package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/enginetest"
	"github.com/wendflow/wend/testkit/quantile"
)

// BenchmarkReadsBesideWrites measures what the reads of a monitored serve cost its writes, over
// a store of WEND_READS_RUNS closed runs (default 100,000; 4 events each). The metrics are made
// once from every run (build-scrape-ms) and kept in the store, which is then opened again:
// the new serve's first scrape (first-scrape-ms) starts from what was kept. First a run's start
// (server.Start, to its first durable commit), 100 a second for 10 s, alone and then while
// /metrics is scraped every second, after a first scrape as a serve already monitored has had:
// start-p50/p99-ms, scraped-start-p50/p99-ms and their p99-ratio (the target is 2), and the
// scrapes' own scrape-p50/p99-ms (the first sums the 1,000 runs started alone). Then
// GET /v1/runs?limit=100 back to back, alone (list-alone-p99-ms) and while PurgeRuns deletes
// every closed run: list-p50/p99-ms (the target: a p99 under 50 ms), and the purge's runs/s.
//
//	go test -run '^$' -bench ReadsBesideWrites -benchtime 1x ./server/metrics/
func BenchmarkReadsBesideWrites(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("WEND_READS_RUNS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "wend.db")
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ids := loadClosed(b, st, n)
		// A serve monitored before: its metrics were made once from every run and kept in the
		// store. Then the serve starts again: its first scrape is timed (first-scrape-ms).
		built := httptest.NewServer(New("").Handler(st, nil))
		t0 := time.Now()
		if resp, err := http.Get(built.URL); err != nil {
			b.Fatal(err)
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		build := time.Since(t0)
		built.Close()
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		if st, err = boltstore.Open(path, boltstore.Options{}); err != nil {
			b.Fatal(err)
		}
		m := New("")
		counted := m.TimeCommits(st)
		<-m.CaughtUp()
		eng := enginetest.New(b, engine.Options{Store: counted, Activities: servertest.Acts{}, Logf: func(string, ...any) {}})
		srv := server.New(eng, st)
		metricsHTTP := httptest.NewServer(m.Handler(st, eng))
		apiHTTP := httptest.NewServer(srv)
		get := func(url string) time.Duration {
			start := time.Now()
			resp, err := http.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("GET %s: %d", url, resp.StatusCode)
			}
			return time.Since(start)
		}
		first := get(metricsHTTP.URL) // a restarted serve's first scrape
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap := ms.HeapAlloc
		k := 0
		start := func() time.Duration {
			k++
			t0 := time.Now()
			_, err := srv.Start(context.Background(), engine.StartRequest{WorkflowID: fmt.Sprintf("s%d", k),
				SpecFile: filepath.Join(b.TempDir(), "d.wend.yaml"), Source: delaySpec})
			if err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
		// Starts paced at startsPerSec, a serve's steady load, rather than back to back: then
		// the scrapes read the runs of a realistic stream of commits, not of a flood.
		paced := func(n int) []time.Duration {
			var ds []time.Duration
			tick := time.NewTicker(time.Second / startsPerSec)
			defer tick.Stop()
			for range n {
				<-tick.C
				ds = append(ds, start())
			}
			return ds
		}
		b.StartTimer()
		var scrapes []time.Duration
		alone := paced(startsMeasured)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					scrapes = append(scrapes, get(metricsHTTP.URL))
				}
			}
		})
		scraped := paced(startsMeasured)
		close(stop)
		wg.Wait()

		var listsAlone, lists []time.Duration
		for range 500 {
			listsAlone = append(listsAlone, get(apiHTTP.URL+"/v1/runs?limit=100"))
		}
		done := make(chan struct{})
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					lists = append(lists, get(apiHTTP.URL+"/v1/runs?limit=100"))
				}
			}
		})
		t0 = time.Now()
		purged, err := st.PurgeRuns(context.Background(), ids, nil)
		took := time.Since(t0)
		close(done)
		wg.Wait()
		b.StopTimer()
		if err != nil || len(purged) != n {
			b.Fatalf("purged %d of %d: %v", len(purged), n, err)
		}
		b.ReportMetric(float64(build.Milliseconds()), "build-scrape-ms")
		b.ReportMetric(float64(first.Microseconds())/1000, "first-scrape-ms")
		b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
		b.ReportMetric(quantile.Millis(alone, 50), "start-p50-ms")
		b.ReportMetric(quantile.Millis(alone, 99), "start-p99-ms")
		b.ReportMetric(quantile.Millis(scraped, 50), "scraped-start-p50-ms")
		b.ReportMetric(quantile.Millis(scraped, 99), "scraped-start-p99-ms")
		b.ReportMetric(quantile.Millis(scraped, 99)/quantile.Millis(alone, 99), "p99-ratio")
		b.ReportMetric(quantile.Millis(scrapes, 50), "scrape-p50-ms")
		b.ReportMetric(quantile.Millis(scrapes, 99), "scrape-p99-ms")
		b.ReportMetric(float64(len(scrapes)), "scrapes")
		b.ReportMetric(quantile.Millis(listsAlone, 99), "list-alone-p99-ms")
		b.ReportMetric(quantile.Millis(lists, 50), "list-p50-ms")
		b.ReportMetric(quantile.Millis(lists, 99), "list-p99-ms")
		b.ReportMetric(float64(len(lists)), "lists")
		b.ReportMetric(float64(n)/took.Seconds(), "purged-runs/s")
		metricsHTTP.Close()
		apiHTTP.Close()
		eng.Close()
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// The starts measured alone and then beside the scrapes: 10 s of each at 100 a second.
const (
	startsPerSec   = 100
	startsMeasured = 1000
)

// loadClosed commits n closed runs of 4 events, started a millisecond apart, and returns their
// ids.
func loadClosed(tb testing.TB, st history.Store, n int) []string {
	return storetest.CommitClosed(tb, st, n, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Millisecond)
}
