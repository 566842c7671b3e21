package interpreter_test

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// compatBase is the file an open run started with: two activities ran, and it waits for go.
const compatBase = sim.Head + `
steps:
  - {id: a, activity: p.echo, with: {n: "${{ input.n }}"}, set: {n: "${{ output.n }}"}}
  - {id: b, activity: p.echo, with: 2}
  - {id: wait, wait_for_signal: go, timeout: 1h}
  - {id: after, activity: p.echo, with: later}
output: "${{ state.n }}"
`

// TestDivergeTellsCompatibleChanges replays the history of a run that waits at its third step
// on edited files: a change after the run's position holds, a change to what it already did
// breaks at the event where the decisions part.
func TestDivergeTellsCompatibleChanges(t *testing.T) {
	s := sim.New(t, compatBase, map[string]any{"n": 5})
	s.RunActivities(sim.Echo)
	if s.Record().Status != history.StatusRunning {
		t.Fatalf("the run is %s, want it open at the wait", s.Record().Status)
	}
	edit := func(old, new string) string {
		if !strings.Contains(compatBase, old) {
			t.Fatalf("%q is not in the base file", old)
		}
		return strings.Replace(compatBase, old, new, 1)
	}
	cases := []struct {
		name     string
		file     string
		holds    bool
		step     string            // the step path where they part
		recorded history.EventType // what the history has there
	}{
		{"unchanged", compatBase, true, "", ""},
		{"step added after the run's position", edit("output:", "  - {id: more, activity: p.echo, with: 2}\noutput:"), true, "", ""},
		{"step not yet reached changed", edit("with: later", "with: sooner"), true, "", ""},
		{"step not yet reached removed", edit("  - {id: after, activity: p.echo, with: later}\n", ""), true, "", ""},
		{"timeout of the current wait changed", edit("timeout: 1h", "timeout: 2h"), false, "steps[2]", history.TimerScheduled},
		{"id of a passed step renamed, references too", strings.ReplaceAll(edit("{id: a,", "{id: first,"), "steps.a.", "steps.first."), true, "", ""},
		{"set of a passed step changed (its result is not in the history)", edit("set: {n: \"${{ output.n }}\"}", "set: {n: 0}"), true, "", ""},
		{"passed step removed", edit("  - {id: b, activity: p.echo, with: 2}\n", ""), false, "steps[1]", history.ActivityScheduled},
		{"passed steps reordered", edit("  - {id: a, activity: p.echo, with: {n: \"${{ input.n }}\"}, set: {n: \"${{ output.n }}\"}}\n  - {id: b, activity: p.echo, with: 2}\n",
			"  - {id: b, activity: p.echo, with: 2}\n  - {id: a, activity: p.echo, with: {n: \"${{ input.n }}\"}, set: {n: \"${{ output.n }}\"}}\n"), false, "steps[0]", history.ActivityScheduled},
		{"step inserted before the run's position", edit("  - {id: wait,", "  - {id: new, activity: p.echo, with: 1}\n  - {id: wait,"), false, "steps[2]", history.TimerScheduled},
		{"expression whose result is in the history changed", edit("with: {n: \"${{ input.n }}\"}", "with: {n: \"${{ input.n + 1 }}\"}"), false, "steps[0]", history.ActivityScheduled},
		{"activity of a passed step changed", edit("{id: b, activity: p.echo", "{id: b, activity: p.other"), false, "steps[1]", history.ActivityScheduled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.Load(t, tc.file)
			d, err := interpreter.Diverge(w, s.Events)
			if err != nil {
				t.Fatal(err)
			}
			if tc.holds {
				if d != nil {
					t.Fatalf("breaks at event %d (%s at %s): %s; want it to hold", d.Seq, d.Recorded, d.Step, d.Reason)
				}
				return
			}
			if d == nil {
				t.Fatal("holds; want it to break")
			}
			if d.Step != tc.step || d.Recorded != tc.recorded {
				t.Fatalf("breaks at event %d, %s at %s (%s); want %s at %s", d.Seq, d.Recorded, d.Step, d.Reason, tc.recorded, tc.step)
			}
			if d.Seq == 0 || d.Seq > s.Events[len(s.Events)-1].Seq+1 {
				t.Fatalf("event %d is outside the history", d.Seq)
			}
		})
	}
}

// TestDivergeRefusesAHistoryWithoutStart: a history that does not begin with WorkflowStarted
// is an error, not a verdict.
func TestDivergeRefusesAHistoryWithoutStart(t *testing.T) {
	w := sim.Load(t, compatBase)
	for _, evs := range [][]history.Event{nil, {{Seq: 1, Type: history.SignalReceived}}} {
		if d, err := interpreter.Diverge(w, evs); err == nil {
			t.Fatalf("%v: no error (divergence %+v)", evs, d)
		}
	}
}
