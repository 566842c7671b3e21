package interpreter_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/spec"
)

// TestQuery: wend query's expression sees input, state, run and the outputs of completed
// steps of a run in flight, and reports what is wrong by name when it cannot answer.
func TestQuery(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: a
    activity: p.echo
    with: {n: "${{ input.n * 2 }}"}
    set: {total: "${{ output.n }}"}
  - for_each: [1, 2]
    steps: [{id: inner, activity: p.echo}]
  - id: approve
    wait_for_signal: approve
`, map[string]any{"n": 21})
	s.RunActivities(sim.Echo)
	n := len(s.Events)
	for _, c := range []struct {
		expr string
		want any
		err  error
		frag string
	}{
		{"input.n", 21.0, nil, ""},
		{"state.total + 1", 43.0, nil, ""},
		{"steps.a.output", map[string]any{"n": 42.0}, nil, ""},
		{"run.workflow_id + '/' + run.run_id", "wf/run1", nil, ""},
		{"state.nope ?? 'none'", "none", nil, ""},
		{"keys(steps)", []any{"a"}, nil, ""},
		{"steps.approve.output", nil, interpreter.ErrQueryFailed, `steps.approve: step "approve" has no output in run run1 (steps with outputs: a)`},
		{"steps.inner.output", nil, interpreter.ErrQueryFailed, `step "inner" has no output`},
		{"steps.zz.output", nil, interpreter.ErrQueryFailed, `steps.zz: workflow t has no step with id "zz" (steps with outputs: a)`},
		{"input.n.x", nil, interpreter.ErrQueryFailed, `evaluate "input.n.x"`},
		{"now()", nil, spec.ErrQuery, "now() reads the clock"},
		{"inptu.n", nil, spec.ErrQuery, `unknown name inptu (did you mean "input"?); names here: input, run, state, steps`},
		{"input.n +", nil, spec.ErrQuery, "unexpected token"},
		{strings.Repeat("1+", 2100) + "1", nil, spec.ErrQuery, "over the 4096-byte limit"},
	} {
		got, err := interpreter.Query(s.Events, c.expr)
		if c.err != nil {
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.frag) {
				t.Errorf("%.40s: %v, want %v with %q", c.expr, err, c.err, c.frag)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v, %v; want %#v", c.expr, got, err, c.want)
		}
	}
	if len(s.Events) != n {
		t.Fatalf("query changed the history: %d events, then %d", n, len(s.Events))
	}
	// A closed run answers too, with the step outputs it ended with.
	s.Signal("approve", map[string]any{"by": "ann"})
	if got, err := interpreter.Query(s.Events, "steps.approve.output.by"); err != nil || got != "ann" {
		t.Fatalf("after the run closed: %v, %v", got, err)
	}
}

// FuzzQuery: a query expression comes from a URL; whatever it is, Query answers a value or
// an error that is spec.ErrQuery or ErrQueryFailed, never a panic.
func FuzzQuery(f *testing.F) {
	s := sim.New(f, sim.Head+`
steps:
  - {id: a, activity: p.echo, with: {n: "${{ input.n }}"}, set: {n: "${{ output.n }}"}}
  - {id: w, wait_for_signal: go}
`, map[string]any{"n": 1})
	s.RunActivities(sim.Echo)
	for _, seed := range []string{"input.n", "steps.a.output", "state", "toJSON(state)", "1..3", "steps.w.output", "{", "now()", "map(1..5, # * 2)"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := interpreter.Query(s.Events, src)
		if err != nil && !errors.Is(err, spec.ErrQuery) && !errors.Is(err, interpreter.ErrQueryFailed) {
			t.Fatalf("%q: %v", src, err)
		}
	})
}
