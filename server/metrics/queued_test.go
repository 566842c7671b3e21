package metrics

import (
	"testing"
	"time"
)

const keyedSpec = `wend: v1
name: keyed
concurrency: {key: all, limit: 1}
steps: [{id: d, delay: 1h}]
`

// A run over its workflow's concurrency key waits queued: the gauge counts it, and wend_runs
// shows its status.
func TestQueuedRunMetrics(t *testing.T) {
	f := newFixture(t)
	f.start("k1", keyedSpec)
	f.start("k2", keyedSpec)
	f.start("k3", keyedSpec)
	want := map[string]float64{
		`wend_runs_queued`: 2,
		`wend_runs{status="queued",workflow="keyed"}`:  2,
		`wend_runs{status="running",workflow="keyed"}`: 1,
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, ok := f.scrape(), true
		for k, v := range want {
			if g, seen := got[k]; !seen || g != v {
				ok = false
				if time.Now().After(deadline) {
					t.Fatalf("%s = %v (present %v), want %v", k, g, seen, v)
				}
			}
		}
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
