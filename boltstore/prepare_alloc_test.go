package boltstore

import (
	"testing"

	"github.com/wendflow/wend/history"
)

// TestPrepareStepAllocations: preparing a step's commit (two events, the run record, a
// task put and one deleted, each encoded by json.Marshal) allocates at most 30 times (27
// measured; the race detector's instrumentation adds a dozen more): a bound on what every
// step's commit feeds the garbage collector.
func TestPrepareStepAllocations(t *testing.T) {
	next := stepCommits("r")
	cs := make([]history.Commit, 60)
	for i := range cs {
		cs[i] = next()
	}
	i := 10 // past the first commits, which differ
	allocs := testing.AllocsPerRun(40, func() {
		if _, err := prepare(cs[i]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	limit := 30.0
	if raceDetector {
		limit = 45
	}
	if allocs > limit {
		t.Fatalf("prepare of a step's commit: %.0f allocations, over %.0f", allocs, limit)
	}
}
