package runview_test

import (
	"slices"
	"testing"

	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/runview"
)

// SpecLeaves lists the leaf rows Steps lays out, in its order, with their kinds and whether a
// catch handles their failure; and says whether the spec waits for signals.
func TestSpecLeavesAreTheStepTreesLeafRows(t *testing.T) {
	src := loopSpec + `  - id: charge
    activity: p.charge
    catch: [{id: refund, activity: p.refund}]
    compensate_with: {id: unbook, activity: p.unbook}
  - id: both
    parallel: [{delay: 1m}, {steps: [{activity: p.echo}]}]
on_cancel: [{id: tidy, activity: p.echo}]
`
	s := sim.New(t, src, nil)
	v := view(t, s)
	var want []runview.LeafStep
	for _, r := range v.Steps() {
		if r.Leaf() {
			w := v.Spec().StepAt(r.Path)
			want = append(want, runview.LeafStep{Path: r.Path, Kind: r.Kind, Catch: len(w.Catch) > 0})
		}
	}
	st := v.Workflow
	leaves, signals, ok := runview.SpecLeaves(st.SpecFile, src)
	if !ok || !signals {
		t.Fatalf("SpecLeaves: ok %v, signals %v; want both", ok, signals)
	}
	if !slices.Equal(leaves, want) {
		t.Errorf("leaves:\n got %v\nwant %v", leaves, want)
	}
	if len(want) < 7 {
		t.Errorf("the step tree has %d leaf rows, the spec 7 or more", len(want))
	}
	var specs runview.Specs
	if got, sig, ok := specs.Leaves(st.SpecFile, src); !ok || !sig || !slices.Equal(got, want) {
		t.Errorf("Specs.Leaves: %v, signals %v, ok %v; want SpecLeaves' %v", got, sig, ok, want)
	}
	if _, _, ok := runview.SpecLeaves("x.wend.yaml", "steps: [oops"); ok {
		t.Error("a text that does not load gave leaves")
	}
	if _, _, ok := specs.Leaves("x.wend.yaml", "steps: [oops"); ok {
		t.Error("a text that does not load gave leaves through Specs")
	}
}
