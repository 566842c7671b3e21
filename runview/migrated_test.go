package runview_test

import (
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/runview"
)

// TestMovedRunIsReadOnItsNewText: after WorkflowMigrated a run's view names the hash it is on
// now, names its steps by the new text, replays on it for its live state, and its history says
// who moved it from which version to which.
func TestMovedRunIsReadOnItsNewText(t *testing.T) {
	old := sim.Head + "steps:\n  - {id: first, activity: p.echo, with: 1}\n  - {id: w, wait_for_signal: go}\n"
	moved := sim.Head + "steps:\n  - {id: renamed, activity: p.echo, with: 1, set: {v: 2}}\n  - {id: w, wait_for_signal: go}\n"
	s := sim.New(t, old, nil)
	s.RunActivities(sim.Echo)
	evs := append([]history.Event(nil), s.Events...)
	from, to := history.SpecSHA256([]byte(old)), history.SpecSHA256([]byte(moved))
	evs = append(evs, history.Event{Seq: uint64(len(evs) + 1), Type: history.WorkflowMigrated, Time: evs[len(evs)-1].Time,
		Data: history.MustData(history.Migration{FromSHA256: from, ToSHA256: to, SpecSource: moved, By: "ann"})})
	rec := s.Record()
	rec.LastSeq, rec.SpecSHA256 = uint64(len(evs)), to
	if ps := append(history.Check(rec, evs), history.CheckRecord(rec, evs)...); len(ps) > 0 {
		t.Fatalf("history check: %v", ps)
	}
	v, err := runview.Fold(rec, evs)
	if err != nil {
		t.Fatal(err)
	}
	if v.Workflow.SpecSHA256 != to {
		t.Errorf("spec_sha256 %s, want the new text's %s", v.Workflow.SpecSHA256, to)
	}
	if got := v.Name("steps[0]"); got != "renamed" {
		t.Errorf("steps[0] is named %q, want the new text's id", got)
	}
	line, _ := runview.EventLine(evs[len(evs)-1], v.Name, "")
	if want := "moved to file version " + to[:12] + " (from " + from[:12] + ") by ann"; line != want {
		t.Errorf("event line %q, want %q", line, want)
	}
	d := runview.DetailOf(rec, evs)
	if d.StateError != "" || string(d.State) != `{"v":2}` {
		t.Errorf("live state %s (%s), want the new text's set", d.State, d.StateError)
	}
}
