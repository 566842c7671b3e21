// Package metrics is wend's Prometheus surface: the collector that reads the store at each
// scrape, and the store decorator that times commits. The CLI wires it: it wraps the engine's
// store with TimeCommits and hands Handler to the TCP listener of package server. Schedules'
// fires and misses are counted by ScheduleMetrics (schedules.go); with the runs in a Temporal
// cluster, ClusterHandler serves the run counts from the cluster's list (cluster.go).
package metrics

import (
	"context"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// Metrics is wend's Prometheus surface. Most of it is derived from the stored histories (runs
// by status and workflow, steps and attempts by outcome, failures by category, backlogs, step
// latency): the durable history is the truth, so the numbers survive restarts and agree with
// `wend show` and the export. What the history cannot say is measured live: commit latency
// (TimeCommits wraps the engine's store), stale outcomes (the engine's counter) and plugin
// processes (SetPluginStats, from the process that runs the plugins).
//
// Over a store that keeps them (boltstore), a scrape reads no run: the run counts come from
// the counts the store keeps at commit, and the step, activity and failure numbers from every
// run's summary, counted from each commit's events as it passes TimeCommits' store
// (counters.go) and kept in the store with their sum (sums.go), a few hundred bytes per run.
type Metrics struct {
	commit prometheus.Histogram
	build  prometheus.Collector // wend_build_info

	mu      sync.Mutex
	plugins func() PluginStats
	// traceDrops counts the events the span builder dropped (traces.go); nil with traces off.
	traceDrops func() uint64
	sums       *summaries // every run's summary, and their sum
	// counters keep the sum from the commits that pass TimeCommits' store (counters.go); nil
	// when that store keeps no feed: a scrape then reads the runs changed since the last.
	counters *counters
	// schedules are wend serve's schedule metrics (schedules.go); nil elsewhere.
	schedules *ScheduleMetrics
	// batches are wend serve's batch metrics (batches.go); nil elsewhere.
	batches *batchCollector
}

// PluginStats count plugin processes for /metrics.
type PluginStats struct {
	Processes int // alive now
	Starts    int // processes started since this process began
	Restarts  int // starts of a plugin that had a process before (it died or was killed)
}

// stepBuckets cover a step from a millisecond to hours (delays and signal waits are steps).
var stepBuckets = prometheus.ExponentialBuckets(0.001, 4, 12)

// New makes the metrics; give TimeCommits' store to the engine and the Metrics to
// ListenTCP. release is the version a release build was stamped with ("" for none: the
// module's version from the build info is used).
func New(release string) *Metrics {
	info, ok := debug.ReadBuildInfo()
	version, goVersion, revision := buildInfo(release, info, ok)
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "wend_build_info",
		Help:        "Always 1; the labels say which wend build serves these metrics.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": goVersion, "revision": revision},
	})
	build.Set(1)
	return &Metrics{
		build: build,
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "wend_commit_duration_seconds",
			Help:    "Time for the store to make one history commit durable (fsync included).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		sums: newSummaries(),
	}
}

// SetPluginStats sets the source of the plugin process counts. Without it those metrics are
// absent rather than zero, so a dashboard does not mistake "not measured" for "none".
func (m *Metrics) SetPluginStats(f func() PluginStats) {
	m.mu.Lock()
	m.plugins = f
	m.mu.Unlock()
}

// TimeCommits wraps st so that every Commit's duration lands in wend_commit_duration_seconds,
// and, over a store with a change feed that keeps what its readers derive (boltstore), so
// that every commit's events are counted as it passes (counters.go): a scrape then reads no
// run. It first catches the kept sum up with the runs changed since it was kept, so call it
// before the engine commits.
func (m *Metrics) TimeCommits(st history.Store) history.Store {
	k := newCounters(m.sums, st)
	m.mu.Lock()
	m.counters = k
	m.mu.Unlock()
	return &timedStore{Store: st, h: m.commit, k: k}
}

// CaughtUp is closed once the counters' first count of the stored runs has ended: at once
// when the store kept their sum, after a read of every run in the background when it did not
// (a database an older wend wrote). Scrapes before then carry wend_metrics_catching_up 1.
func (m *Metrics) CaughtUp() <-chan struct{} {
	m.mu.Lock()
	k := m.counters
	m.mu.Unlock()
	if k == nil || k.caughtUp == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return k.caughtUp
}

type timedStore struct {
	history.Store
	h prometheus.Histogram
	k *counters // nil: not counted at commit
}

func (t *timedStore) Commit(ctx context.Context, c history.Commit) error {
	k := t.k.active()
	if k != nil {
		k.begin(c)
	}
	start := time.Now()
	err := t.Store.Commit(ctx, c)
	t.h.Observe(time.Since(start).Seconds())
	if k != nil {
		k.end(c, err)
	}
	return err
}

// Close keeps the counters' sum before it closes the store, so the next process reads no run
// to catch up. A catch-up under way is stopped first, keeping nothing of it.
func (t *timedStore) Close() error {
	if t.k != nil {
		t.k.ss.stop.Store(true)
		t.k.ss.mu.Lock()
		_ = t.k.settle() // what is not kept is read again by the next process
		t.k.ss.mu.Unlock()
	}
	return t.Store.Close()
}

// Handler serves the metrics of store and of eng (nil when no engine drives the store here)
// in the Prometheus text format.
func (m *Metrics) Handler(store history.Store, eng *engine.Engine) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.commit,
		m.build,
		&collector{m: m, store: store, eng: eng},
	)
	m.mu.Lock()
	if m.schedules != nil {
		reg.MustRegister(m.schedules) // schedules.go
	}
	if m.batches != nil {
		reg.MustRegister(m.batches) // batches.go
	}
	m.mu.Unlock()
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}
