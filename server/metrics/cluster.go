package metrics

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// ClusterHandler serves the metrics of runs that live on a cluster (wend serve --temporal):
// wend_runs by status and workflow from list, which reads the cluster's visibility store once
// per scrape, plus the build and process metrics. The per-step and per-try metrics are left
// out rather than read: each would cost a query of every run's history, answered by a worker,
// at every scrape.
func (m *Metrics) ClusterHandler(list func() ([]history.Run, error)) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.build,
		clusterRuns(list),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}

// clusterRuns collects wend_runs from a list of runs.
type clusterRuns func() ([]history.Run, error)

func (l clusterRuns) Describe(ch chan<- *prometheus.Desc) { ch <- descRuns }

func (l clusterRuns) Collect(ch chan<- prometheus.Metric) {
	runs, err := l()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descRuns, fmt.Errorf("list runs: %w", err))
		return
	}
	names := map[string]bool{}
	for _, r := range runs {
		names[r.Name] = true
	}
	label := boundNames(names)
	byName := map[string]map[string]int{}
	for _, r := range runs {
		count(byName, label.label(r.Name), r.Status, 1)
	}
	for wf, byStatus := range byName {
		for _, st := range server.RunStatuses {
			ch <- prometheus.MustNewConstMetric(descRuns, prometheus.GaugeValue, float64(byStatus[st]), st, wf)
		}
	}
}
