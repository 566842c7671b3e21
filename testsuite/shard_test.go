package testsuite

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

// TestShardedForEachCountsItsCalls: the calls a shard child makes are the for_each's own, so
// `calls:` lists them, in item order, under the step labels the user wrote, each item named by
// its global index.
func TestShardedForEachCountsItsCalls(t *testing.T) {
	wf := head + `input: {type: object, required: [items]}
steps:
  - id: loop
    for_each: "${{ input.items }}"
    shard: 2
    steps: [{id: x, activity: p.x, with: "${{ item }}"}]
  - id: after
    activity: p.y
`
	rep, _ := runFiles(t, wf, `cases:
  - name: every item's call
    input: {items: [a, b, c]}
    mocks: [{activity: p.x, echo: true}, {activity: p.y, output: done}]
    expect:
      status: completed
      calls: [{activity: p.x, step: x, input: a}, {activity: p.x, input: b}, {activity: p.x, input: c}, p.y]
`)
	if c := onlyCase(t, rep); !c.Passed {
		t.Fatalf("%s %+v\n%s", c.Problem, c.Mismatches, strings.Join(c.Timeline, "\n"))
	}
}
