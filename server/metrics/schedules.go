package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wendflow/wend/schedule/runner"
)

// ScheduleMetrics are the schedules' metrics at /metrics: fires by result (from each
// schedule's durable counts, so they survive restarts) and the lag of each started fire
// behind its due time.
type ScheduleMetrics struct {
	lag    *prometheus.HistogramVec
	fires  *prometheus.Desc
	source func() []runner.View
}

// NewScheduleMetrics makes them; give Observe to the schedule runner, its List to SetSource,
// and the result to Metrics.SetSchedules.
func NewScheduleMetrics() *ScheduleMetrics {
	return &ScheduleMetrics{
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wend_schedule_lag_seconds",
			Help:    "Time from a fire's due time (nominal time plus jitter) to the start of its run.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"schedule"}),
		fires: prometheus.NewDesc("wend_schedule_fires_total",
			"Fires of a schedule by result: started, skipped (the overlap policy dropped it) or missed (older than the catch-up window).",
			[]string{"schedule", "result"}, nil),
	}
}

// SetSource sets where the fire counts are read at each scrape. Call it before serving.
func (m *ScheduleMetrics) SetSource(list func() []runner.View) { m.source = list }

// Observe records a started fire's lag.
func (m *ScheduleMetrics) Observe(scheduleID string, lag time.Duration) {
	m.lag.WithLabelValues(scheduleID).Observe(max(lag, 0).Seconds())
}

// SetSchedules publishes the schedule metrics with the others.
func (m *Metrics) SetSchedules(s *ScheduleMetrics) {
	m.mu.Lock()
	m.schedules = s
	m.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (m *ScheduleMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.lag.Describe(ch)
	ch <- m.fires
}

// Collect implements prometheus.Collector.
func (m *ScheduleMetrics) Collect(ch chan<- prometheus.Metric) {
	m.lag.Collect(ch)
	if m.source == nil {
		return
	}
	for _, v := range m.source() {
		for _, x := range []struct {
			result string
			n      uint64
		}{{"started", v.State.Counts.Started}, {"skipped", v.State.Counts.Skipped}, {"missed", v.State.Counts.Missed}} {
			ch <- prometheus.MustNewConstMetric(m.fires, prometheus.CounterValue, float64(x.n), v.ID, x.result)
		}
	}
}
