package driver

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/spec"
)

const parityBase = sim.Head + `steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: b, activity: p.echo, with: 2}
output: "${{ [steps.a.output, steps.b.output] }}"
`

// TestDivergeSameOnTemporal: the replay check of wend validate --against and wend migrate
// gives the same verdict on a run's history recorded by the Temporal driver as on the same
// run's history recorded locally: an edit holds for both or breaks both, at the same step,
// with the same event types and reason.
func TestDivergeSameOnTemporal(t *testing.T) {
	e, _ := newEnv(t)
	evs := run(t, e, startInput(parityBase, nil, nil))
	local := sim.New(t, parityBase, nil)
	local.RunActivities(sim.Echo)
	sameAsLocal(t, evs, local)
	edit := func(old, new string) string {
		if !strings.Contains(parityBase, old) {
			t.Fatalf("%q is not in the base", old)
		}
		return strings.Replace(parityBase, old, new, 1)
	}
	for _, c := range []struct {
		name, src string
		holds     bool
	}{
		{"unchanged", parityBase, true},
		{"ids renamed", strings.ReplaceAll(edit("{id: a,", "{id: first,"), "steps.a.", "steps.first."), true},
		{"a with: that ran changed", edit("with: 2", "with: 20"), false},
		{"a step inserted before what ran", edit("  - {id: a,", "  - {id: z, activity: p.echo, with: 0}\n  - {id: a,"), false},
		{"a step added after the end", edit("output:", "  - {id: c, activity: p.echo, with: 3}\noutput:"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, ds := (&spec.Loader{SkipChildren: true}).Load(specFile, []byte(c.src))
			if ds.HasErrors() {
				t.Fatal(ds.Error())
			}
			onTemporal, err := interpreter.Diverge(w, evs)
			if err != nil {
				t.Fatal(err)
			}
			locally, err := interpreter.Diverge(w, local.Events)
			if err != nil {
				t.Fatal(err)
			}
			if (onTemporal == nil) != c.holds || (locally == nil) != c.holds {
				t.Fatalf("on Temporal %+v, locally %+v; want holds=%v for both", onTemporal, locally, c.holds)
			}
			if onTemporal != nil && *onTemporal != *locally {
				t.Fatalf("verdicts differ:\non Temporal %+v\nlocally    %+v", *onTemporal, *locally)
			}
		})
	}
}
