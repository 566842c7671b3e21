package metrics

import (
	"testing"
	"time"
)

const limitedSpec = `wend: v1
name: limited
plugins: {demo: ./demo}
limits: {demo.echo: {rate: 1/h}}
steps: [{id: e, activity: demo.echo, with: 1}]
`

// A try held back by a workflow's limits: shows as waiting on its activity.
func TestLimitMetrics(t *testing.T) {
	f := newFixture(t)
	f.start("l1", limitedSpec)
	f.settle("l1", closed)
	f.start("l2", limitedSpec) // the hour's one start is taken: this try waits
	want := map[string]float64{
		`wend_activity_limit_running{activity="demo.echo"}`: 0,
		`wend_activity_limit_waiting{activity="demo.echo"}`: 1,
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
