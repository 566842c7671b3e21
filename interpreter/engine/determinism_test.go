package engine

import (
	"fmt"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestForEachOverKeysEndsTheSame: 12 runs of a for_each over keys(input.m) of a
// 6-key map ended on 5 different items, and a recovered run was refused as nondeterministic.
// Twenty runs must now end on the same item with the same output, and each history replays.
func TestForEachOverKeysEndsTheSame(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+`
steps:
  - id: each
    for_each: "${{ keys(input.m) }}"
    steps: [{activity: p.echo, with: "${{ item }}", set: {last: "${{ output }}"}}]
output: {last: "${{ state.last }}", all: "${{ steps.each.output }}", pairs: "${{ toPairs(input.m) }}"}
`)
	const want = `{"all":["a","b","c","d","e","f"],"last":"f","pairs":[["a",1],["b",2],["c",3],["d",4],["e",5],["f",6]]}`
	for i := range 20 {
		id := fmt.Sprintf("keys-%d", i)
		h.start(f, id, `{"m": {"e": 5, "c": 3, "a": 1, "f": 6, "b": 2, "d": 4}}`)
		r := h.wait(id)
		if r.Status != history.StatusCompleted {
			t.Fatalf("run %d: %s: %s", i, r.Status, h.output(r))
		}
		if got := h.output(r); got != want {
			t.Fatalf("run %d output %s, want %s", i, got, want)
		}
	}
}
