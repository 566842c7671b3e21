// Package quantile gives the latency percentiles benchmarks report.
package quantile

import (
	"slices"
	"time"
)

// Millis is the p-th percentile of ds (nearest rank, rounding down), in milliseconds; 0 when ds
// is empty. ds is not reordered.
func Millis(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[(len(s)-1)*p/100]) / float64(time.Millisecond)
}
