package metrics

import (
	"reflect"
	"testing"

	"github.com/wendflow/wend/runview"
)

// A summary packed and unpacked is the same summary, empty maps and all.
func TestPackedSummaryRoundTrip(t *testing.T) {
	full := newRunSummary()
	full.name, full.status, full.lastSeq = "order", "running", 1<<40
	full.steps = map[string]int{"completed": 3, "waiting": 1}
	full.failures = map[string]int{"activity": 2}
	full.nonRetryable, full.signals = 1, 4
	full.backlog = runview.Backlog{RetryingActivities: 1, PendingActivities: 2, PendingTimers: 3}
	full.attempts = map[string]map[string]int{"demo.echo": {"completed": 2, "failed": 1}, "demo.x": {}}
	full.activities = map[string]map[string]int{"demo.echo": {"completed": 1}}
	h := &stepHist{}
	h.observe(0.002)
	h.observe(90)
	full.latency = map[string]*stepHist{"activity": h}
	empty := newRunSummary()
	for name, s := range map[string]*runSummary{"full": full, "empty": empty} {
		p := pack(s)
		got, err := p.unpack()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("%s: unpacked %+v, packed %+v", name, got, s)
		}
		if n, st, seq := p.header(); n != s.name || st != s.status || seq != s.lastSeq {
			t.Fatalf("%s: header %q %q %d", name, n, st, seq)
		}
		for i := range len(p) { // cut short anywhere: an error, never a panic
			if _, err := p[:i].unpack(); err == nil && i < len(p) {
				t.Fatalf("%s: cut at %d of %d unpacks", name, i, len(p))
			}
		}
	}
}
