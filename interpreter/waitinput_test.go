package interpreter_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// TestInputAfterWait: a run waiting on a signal holds its input as JSON, not decoded; the step
// after the wait reads the same input and run ids, in a run that went on and in one rebuilt by
// ReplayDecoded from a payload whose bytes its caller then reused.
func TestInputAfterWait(t *testing.T) {
	const src = "wend: v1\nname: t\nplugins: {p: ./p}\nsteps:\n" +
		"  - {activity: p.a, with: {n: \"${{ input.order.n }}\"}}\n" +
		"  - {wait_for_signal: go}\n" +
		"  - {activity: p.b, with: {n: \"${{ input.order.n }}\", tags: \"${{ input.tags }}\", run: \"${{ run.run_id }}\"}}\n"
	w, ds := (&spec.Loader{}).Load("t.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	input := []byte(`{"order": {"n": 7}, "tags": ["x", "y"]}`)
	st := history.Started{WorkflowID: "w", RunID: "r1", Input: input, SpecFile: "t.wend.yaml", SpecSource: src, Rules: history.RulesCurrent}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := interpreter.New(w, st)
	var evs []history.Event
	apply := func(r *interpreter.Run, ev history.Event) []history.Event {
		t.Helper()
		ev.Seq, ev.Time = uint64(len(evs)+1), t0
		out, err := r.Apply(ev)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		for _, d := range out {
			d.Seq = uint64(len(evs) + 1)
			evs = append(evs, d)
		}
		return out
	}
	a := only(t, apply(r, history.Event{Type: history.WorkflowStarted, Data: history.MustData(st)}), history.ActivityScheduled)
	apply(r, history.Event{Type: history.ActivityCompleted, Step: a.Step, ActivityExecutionID: a.ActivityExecutionID, Attempt: 1,
		Data: history.MustData(history.ActivityResult{Output: json.RawMessage(`1`)})})
	waiting := slices.Clone(evs)

	rebuilt := interpreter.New(w, st)
	if err := rebuilt.ReplayDecoded(waiting); err != nil {
		t.Fatal(err)
	}
	copy(input, `{"order": {"n": 9}, "tags": ["z", "z"]}`) // the caller's buffer, reused
	signal := history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: "go"})}
	for name, r := range map[string]*interpreter.Run{"went on": r, "rebuilt": rebuilt} {
		evs = slices.Clone(waiting)
		sched, err := history.DataOf[history.ActivitySchedule](only(t, apply(r, signal), history.ActivityScheduled))
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"n":7,"run":"r1","tags":["x","y"]}`; string(sched.Input) != want {
			t.Errorf("%s: the step after the wait got %s, want %s", name, sched.Input, want)
		}
	}
}
