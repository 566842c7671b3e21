package driver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
)

// TestShardedForEach: a for_each with shard runs on Temporal as on the local engine: its
// items run in shard child workflows of the parent's own spec text, the output lists every
// item's output in order, and the parent's wend history holds two events a child.
func TestShardedForEach(t *testing.T) {
	src := sim.Head + "steps:\n  - id: loop\n    for_each: \"${{ input.items }}\"\n    shard: 4\n    concurrency: 2\n" +
		"    steps: [{activity: p.echo, with: \"${{ [item, index] }}\"}]\noutput: \"${{ steps.loop.output }}\"\n"
	e, _ := newEnv(t)
	evs := run(t, e, startInput(src, map[string]any{"items": []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}, nil))
	var got [][]any
	if err := json.Unmarshal([]byte(output(t, e)), &got); err != nil || len(got) != 10 {
		t.Fatalf("output %s (%v)", output(t, e), err)
	}
	for i, g := range got {
		if want := []any{string(rune('a' + i)), float64(i)}; fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("output[%d] = %v, want %v", i, g, want)
		}
	}
	if n := len(ofType(evs, history.ChildWorkflowCompleted)); n != 3 || len(evs) != 1+2*3+1 {
		t.Fatalf("%d children completed, %d parent events; want 3 and 8", n, len(evs))
	}
	for k := range 3 {
		step := fmt.Sprintf("steps[0]#shard%d", k)
		child := queryEventsOf(t, e, childIDOf(t, evs, step))
		st, _ := history.DataOf[history.Started](child[0])
		if st.SpecSource != src || st.Shard == nil || st.Shard.Offset != 4*k || st.ParentStep != step {
			t.Fatalf("shard child %d started %+v", k, st)
		}
		if n := len(ofType(child, history.ActivityCompleted)); n != min(4, 10-4*k) {
			t.Fatalf("shard child %d ran %d items", k, n)
		}
	}
}

// TestShardedForEachChildFails: a failed item fails its shard child, which fails the step.
func TestShardedForEachChildFails(t *testing.T) {
	src := sim.Head + "steps:\n  - for_each: [1, 2, 3, 4, 5]\n    shard: 2\n" +
		"    steps: [{if: \"${{ item == 3 }}\", fail: item three}]\n"
	e, _ := newEnv(t)
	e.ExecuteWorkflow(wire.WorkflowType, startInput(src, nil, nil))
	c := wendFailure(t, e, history.WorkflowFailed)
	if c.Failure == nil || c.Failure.Category != history.CategoryChildWorkflow || !strings.Contains(c.Failure.Message, "item three") {
		t.Fatalf("failure %+v", c.Failure)
	}
}
