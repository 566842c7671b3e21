package metrics

import "github.com/prometheus/client_golang/prometheus"

var descTraceDrops = metricDesc("wend_trace_events_dropped_total",
	"Committed events the span builder had no room for (its queue was full): the spans they ended were not exported.")

// SetTraceDrops sets the source of wend_trace_events_dropped_total (tracing's
// Observer.Dropped). Without it, traces are off and the metric is absent.
func (m *Metrics) SetTraceDrops(f func() uint64) {
	m.mu.Lock()
	m.traceDrops = f
	m.mu.Unlock()
}

func (c *collector) traceDrops(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	f := c.m.traceDrops
	c.m.mu.Unlock()
	if f != nil {
		ch <- prometheus.MustNewConstMetric(descTraceDrops, prometheus.CounterValue, float64(f()))
	}
}
