package boltstore

import (
	"testing"

	"github.com/wendflow/wend/history"
)

// TestPrepareStepAllocations: preparing a step's commit (two events, the run record, a
// task put and one deleted) allocates at most 18 times (25 with the record and task encoded by
// json.Marshal and each event's time by MarshalJSON; 15 now, 16 under -race): a bound on what
// every step's commit feeds the garbage collector.
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
	if allocs > 18 {
		t.Fatalf("prepare of a step's commit: %.0f allocations, over 18", allocs)
	}
}
