package metrics

import (
	"bufio"
	"strconv"
	"strings"
	"testing"

	"github.com/wendflow/wend/runview"
)

// scrape reads /metrics into name{labels} -> value.
func (f *fixture) scrape() map[string]float64 {
	f.t.Helper()
	body := f.body()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			f.t.Fatalf("metric line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func TestMetrics(t *testing.T) {
	f := newFixture(t)
	f.start("w1", waitSpec)
	f.settle("w1", waitingFor(runview.WaitSignal, 0))
	f.start("f1", failSpec)
	f.settle("f1", closed)
	f.start("d1", delaySpec)
	f.start("r1", flakySpec)
	f.settle("r1", waitingFor(runview.WaitActivity, 2))
	want := map[string]float64{
		`wend_runs{status="running",workflow="approval"}`:                   1,
		`wend_runs{status="running",workflow="typed"}`:                      1,
		`wend_runs{status="running",workflow="flaky"}`:                      1,
		`wend_runs{status="failed",workflow="failing"}`:                     1,
		`wend_runs{status="completed",workflow="failing"}`:                  0,
		`wend_steps{status="waiting"}`:                                      2, // the signal wait and the delay
		`wend_steps{status="failed"}`:                                       1,
		`wend_steps{status="retrying"}`:                                     1,
		`wend_activity_attempts{activity="demo.fail",outcome="failed"}`:     1,
		`wend_activity_attempts{activity="demo.flaky",outcome="failed"}`:    1,
		`wend_activity_attempts{activity="demo.flaky",outcome="scheduled"}`: 1, // the retry, owed
		`wend_activity_attempts{activity="demo.echo",outcome="completed"}`:  1,
		`wend_activities{activity="demo.flaky",status="retrying"}`:          1,
		`wend_failures_total{category="activity",workflow="failing"}`:       3, // attempt, activity, workflow
		`wend_failures_total{category="activity",workflow="flaky"}`:         1, // attempt 1
		`wend_failures_total{category="timeout",workflow="failing"}`:        0,
		`wend_failures_non_retryable_total{workflow="failing"}`:             3,
		`wend_failures_non_retryable_total{workflow="flaky"}`:               0,
		`wend_retry_backlog`:                                  1,
		`wend_timers_pending`:                                 1,
		`wend_signals_pending`:                                0,
		`wend_stale_outcomes_total`:                           0,
		`wend_engine_up`:                                      1,
		`wend_activity_calls_max`:                             256,
		`wend_activity_calls_running`:                         0, // the retry waits out its backoff
		`wend_activity_calls_waiting{limit="max_activities"}`: 0,
	}
	for round := range 2 { // the second scrape reads closed runs from the cache: same numbers
		got := f.scrape()
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("scrape %d: %s = %v, want %v", round, k, got[k], v)
			}
		}
		if got["wend_commit_duration_seconds_count"] < 5 {
			t.Errorf("commit latency not measured: %v", got["wend_commit_duration_seconds_count"])
		}
		if got[`wend_step_duration_seconds_count{kind="activity"}`] < 2 {
			t.Errorf("step latency: %v", got[`wend_step_duration_seconds_count{kind="activity"}`])
		}
		if _, ok := got["wend_plugin_processes"]; ok {
			t.Errorf("plugin metrics without a source")
		}
		if _, ok := got["wend_trace_events_dropped_total"]; ok {
			t.Errorf("trace drops without traces")
		}
	}
	f.m.SetPluginStats(func() PluginStats { return PluginStats{Processes: 2, Starts: 5, Restarts: 3} })
	f.m.SetTraceDrops(func() uint64 { return 7 })
	got := f.scrape()
	for k, v := range map[string]float64{"wend_plugin_processes": 2, "wend_plugin_starts_total": 5, "wend_plugin_restarts_total": 3,
		"wend_trace_events_dropped_total": 7} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
