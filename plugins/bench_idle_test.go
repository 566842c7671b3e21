package plugins

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCallAfterIdle: a no-op call after both processes sat idle for a while, as in a
// sequential workflow where each call follows a commit's fsync. On a VM an idle vCPU halts and
// waking it costs far more than a call between busy processes; this shows how much.
func BenchmarkCallAfterIdle(b *testing.B) {
	h, _ := benchPair(b)
	ctx := context.Background()
	c := call("t", "noop", nil)
	for _, gap := range []time.Duration{0, 400 * time.Microsecond, 2 * time.Millisecond} {
		ds := make([]time.Duration, 0, b.N)
		for range b.N {
			if gap > 0 {
				time.Sleep(gap)
			}
			start := time.Now()
			if _, err := h.Execute(ctx, c, nil); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		b.ReportMetric(float64(median(ds).Nanoseconds())/1000, "idle-"+gap.String()+"-median-µs")
	}
}
