package metrics

import "github.com/prometheus/client_golang/prometheus"

// BatchCounts are what the batch metrics read at each scrape: batches kept by status, and the
// runs the running ones have yet to act on.
type BatchCounts struct {
	ByStatus map[string]int
	Pending  int
}

// batchStatuses are the statuses wend_batches always has, at zero if need be.
var batchStatuses = []string{"running", "completed", "failed", "cancelled"}

// batchCollector publishes wend serve's batches (package batch).
type batchCollector struct {
	source  func() BatchCounts
	batches *prometheus.Desc
	pending *prometheus.Desc
}

// SetBatches publishes the batch metrics, read from source at each scrape. Call it before
// serving.
func (m *Metrics) SetBatches(source func() BatchCounts) {
	m.mu.Lock()
	m.batches = &batchCollector{source: source,
		batches: prometheus.NewDesc("wend_batches", "Batches kept (running, and the last 1000 closed), by status.", []string{"status"}, nil),
		pending: prometheus.NewDesc("wend_batch_runs_pending", "Runs the running batches have yet to act on.", nil, nil)}
	m.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *batchCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.batches
	ch <- c.pending
}

// Collect implements prometheus.Collector.
func (c *batchCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.source()
	for _, s := range batchStatuses {
		ch <- prometheus.MustNewConstMetric(c.batches, prometheus.GaugeValue, float64(n.ByStatus[s]), s)
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(n.Pending))
}
