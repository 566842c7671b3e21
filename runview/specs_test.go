package runview_test

import (
	"slices"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/runview"
)

// Views of runs of one text that use one Specs share one load of it and read the same as views
// that load it afresh; a moved run is read on its new text through it too.
func TestSpecsShareALoadAndReadTheSame(t *testing.T) {
	old := sim.Head + "steps:\n  - {id: first, activity: p.echo, with: 1}\n  - {id: w, wait_for_signal: go}\n"
	moved := sim.Head + "steps:\n  - {id: renamed, activity: p.echo, with: 1}\n  - {id: w, wait_for_signal: go}\n"
	s := sim.New(t, old, nil)
	s.RunActivities(sim.Echo)
	evs, rec := append([]history.Event(nil), s.Events...), s.Record()

	var specs runview.Specs
	fold := func(rec history.Run, evs []history.Event, specs *runview.Specs) *runview.View {
		v, err := runview.Fold(rec, evs)
		if err != nil {
			t.Fatal(err)
		}
		if specs != nil {
			v.UseSpecs(specs)
		}
		return v
	}
	a, b, fresh := fold(rec, evs, &specs), fold(rec, evs, &specs), fold(rec, evs, nil)
	if a.Spec() == nil || a.Spec() != b.Spec() {
		t.Fatalf("two views of one text: specs %p and %p, want one shared load", a.Spec(), b.Spec())
	}
	if fresh.Spec() == a.Spec() {
		t.Fatal("a view without Specs shares the load")
	}
	if !slices.Equal(a.Steps(), fresh.Steps()) || a.Name("steps[0]") != "first" {
		t.Fatalf("steps through Specs %+v, loaded afresh %+v", a.Steps(), fresh.Steps())
	}
	if len(a.Live().SignalWaits) != 1 || a.Live().Err != "" {
		t.Fatalf("live through Specs: signal waits %+v, err %q", a.Live().SignalWaits, a.Live().Err)
	}

	from, to := history.SpecSHA256([]byte(old)), history.SpecSHA256([]byte(moved))
	evs = append(evs, history.Event{Seq: uint64(len(evs) + 1), Type: history.WorkflowMigrated, Time: evs[len(evs)-1].Time,
		Data: history.MustData(history.Migration{FromSHA256: from, ToSHA256: to, SpecSource: moved, By: "ann"})})
	rec.LastSeq, rec.SpecSHA256 = uint64(len(evs)), to
	if got := fold(rec, evs, &specs).Name("steps[0]"); got != "renamed" {
		t.Fatalf("a moved run through Specs names steps[0] %q, want the new text's id", got)
	}
}
