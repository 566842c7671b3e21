package interpreter_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
)

// TestEveryExpressionListIsAList: `for_each: "${{ 1..100 }}"` passed validate
// and failed at run time ("expected a list, got []int"): expr makes lists of several Go types
// ([]int from ranges, []string from split, []any elsewhere). Each list an expression can
// make must work as for_each's items, as a `with` input, through `set` into state and back
// into a for_each, and as the run's output.
func TestEveryExpressionListIsAList(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"1..4", `[1,2,3,4]`},
		{"[1, 'a', true]", `[1,"a",true]`},
		{"map(1..3, # * 2)", `[2,4,6]`},
		{"map(1..2, 'x' + string(#))", `["x1","x2"]`},
		{"filter(1..6, # % 2 == 0)", `[2,4,6]`},
		{"split('a,b,c', ',')", `["a","b","c"]`},
		{"splitAfter('a,b', ',')", `["a,","b"]`},
		{"keys({'b': 1, 'a': 2})", `["a","b"]`},
		{"values({'b': 1, 'a': 2})", `[2,1]`},
		{"toPairs({'b': 1, 'a': 2})", `[["a",2],["b",1]]`},
		{"sort([3, 1, 2])", `[1,2,3]`},
		{"sort(1..3, 'desc')", `[3,2,1]`},
		{"sortBy(input.xs, -#)", `[3,2,1]`},
		{"reverse(1..3)", `[3,2,1]`},
		{"uniq([1, 1, 2])", `[1,2]`},
		{"concat(1..2, ['x'])", `[1,2,"x"]`},
		{"flatten([[1], [2, [3]]])", `[1,2,3]`},
		{"take(1..5, 2)", `[1,2]`},
		{"(1..5)[1:3]", `[2,3]`},
		{"input.xs[1:]", `[2,3]`},
		{"groupBy(1..4, # % 2)[0]", `[2,4]`},
		{"1..0", `[]`},
		{"1..4 | map(# + 1) | filter(# > 2)", `[3,4,5]`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			q := strings.ReplaceAll(tc.expr, "'", "''")
			s := sim.New(t, sim.Head+fmt.Sprintf(`
steps:
  - {id: in, activity: p.echo, with: '${{ %[1]s }}', set: {kept: '${{ %[1]s }}'}}
  - id: each
    for_each: '${{ %[1]s }}'
    steps: [{activity: p.echo, with: "${{ item }}"}]
  - id: again
    for_each: "${{ state.kept }}"
    steps: [{activity: p.echo, with: "${{ item }}"}]
output: {in: "${{ steps.in.output }}", each: "${{ steps.each.output }}", again: "${{ steps.again.output }}", direct: '${{ %[1]s }}'}
`, q), map[string]any{"xs": []any{1, 2, 3}})
			s.RunActivities(sim.Echo)
			out := s.Output(t).(map[string]any)
			for _, k := range []string{"in", "each", "again", "direct"} {
				b, _ := json.Marshal(out[k])
				if string(b) != tc.want {
					t.Errorf("%s: %s, want %s", k, b, tc.want)
				}
			}
			s.ReplayOK(t)
		})
	}
}

// TestForEachOverNonListNamesWhatItGot keeps the message for what is not a list useful.
func TestForEachOverNonListNamesWhatItGot(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"input.m", "expected a list, got a map (use keys(), values() or toPairs() to walk it)"},
		{"'abc'", "expected a list, got a string"},
		{"3", "expected a list, got a number"},
	} {
		s := sim.New(t, sim.Head+"steps: [{for_each: \"${{ "+tc.expr+" }}\", steps: [{activity: p.echo}]}]\n",
			map[string]any{"m": map[string]any{"a": 1}})
		c := s.Closed(t)
		if s.Last().Type != history.WorkflowFailed || c.Failure == nil || !strings.Contains(c.Failure.Message, tc.want) {
			t.Errorf("%s: %s %+v, want failure %q", tc.expr, s.Last().Type, c.Failure, tc.want)
		}
	}
}
