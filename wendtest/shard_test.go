package wendtest

import (
	"strings"
	"testing"
)

// TestShardedForEach: `wend test` plays a for_each with shard as the engine runs it: each
// slice as a child run of the workflow's own text over its items (not the whole workflow
// again with the slice as its input), outputs in item order, index global.
func TestShardedForEach(t *testing.T) {
	wf := head + `input: {type: object, required: [items]}
steps:
  - id: loop
    for_each: "${{ input.items }}"
    shard: 2
    steps: [{activity: p.x, with: "${{ [item, index] }}"}]
output: "${{ steps.loop.output }}"
`
	rep, _ := runFiles(t, wf, `cases:
  - name: three slices
    input: {items: [a, b, c, d, e]}
    mocks: [{activity: p.x, echo: true}]
    expect:
      status: completed
      output: [[a, 0], [b, 1], [c, 2], [d, 3], [e, 4]]
`)
	if c := onlyCase(t, rep); !c.Passed {
		t.Fatalf("%s %+v\n%s", c.Problem, c.Mismatches, strings.Join(c.Timeline, "\n"))
	}
}
