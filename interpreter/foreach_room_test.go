package interpreter_test

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

func items(n int) map[string]any {
	l := make([]int, n)
	for i := range l {
		l[i] = i
	}
	return map[string]any{"items": l}
}

// TestForEachPastHistoryLimit: a
// for_each over 100,000 items fails when it starts, with structural_limit, before any
// activity is scheduled (it used to run 25,600 calls first and fail at 51,200 events).
func TestForEachPastHistoryLimit(t *testing.T) {
	src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    concurrency: 100\n    steps: [{activity: p.x}]\n"
	s := sim.New(t, src, items(100_000))
	c := s.Closed(t)
	if c.Failure == nil || c.Failure.Category != history.CategoryStructuralLimit ||
		!strings.Contains(c.Failure.Message, "for_each over 100000 items needs at least 200000 history events") {
		t.Fatalf("closed %s %+v", s.Last().Type, c.Failure)
	}
	for _, ev := range s.Events {
		if ev.Type == history.ActivityScheduled {
			t.Fatalf("an activity was scheduled before the for_each failed: %+v", ev)
		}
	}
	s.ReplayOK(t)
}

// TestForEachRoomBoundary checks the bound is the least number of events each body records:
// with room for exactly 10 items the for_each runs (and completes, for the activity body),
// with 11 it fails at once. The run first waits for a signal, with its event count set so
// that the history has room for 10 items of the body.
func TestForEachRoomBoundary(t *testing.T) {
	cases := []struct {
		name, body string
		per        int
	}{
		{"one activity", "[{activity: p.x}]", 2},
		{"two activities", "[{activity: p.x}, {activity: p.y}]", 4},
		{"skippable step counts nothing", "[{activity: p.x, if: \"${{ item >= 0 }}\"}, {activity: p.y}]", 2},
		{"delay and signal wait", "[{delay: 1s}, {wait_for_signal: s}]", 3},
		{"parallel branches add up", "[{parallel: [{activity: p.x}, {activity: p.y}]}]", 4},
		{"catch path is cheaper", "[{activity: p.x, catch: [{wait_for_signal: s}]}]", 1},
	}
	for _, tc := range cases {
		for _, n := range []int{10, 11} {
			t.Run(tc.name+"/"+map[int]string{10: "fits", 11: "over"}[n], func(t *testing.T) {
				src := sim.Head + "steps:\n  - wait_for_signal: go\n  - for_each: \"${{ input.items }}\"\n    concurrency: 20\n    steps: " + tc.body + "\n"
				s := sim.New(t, src, items(n))
				// The signal's input and its SignalApplied come before the for_each starts.
				interpreter.SetEventCount(s.R, interpreter.MaxEvents-2-tc.per*10)
				s.Signal("go", nil)
				failed := s.Last().Type == history.WorkflowFailed
				if failed != (n == 11) {
					t.Fatalf("%d items: last event %s, want a failure only for 11", n, s.Last().Type)
				}
				if failed {
					if c := s.Closed(t); c.Failure.Category != history.CategoryStructuralLimit {
						t.Fatalf("failure %+v", c.Failure)
					}
					return
				}
				if tc.per == 2 && tc.name == "one activity" { // the bound is tight: 10 items complete
					s.RunActivities(sim.Echo)
					if s.Last().Type != history.WorkflowCompleted {
						t.Fatalf("10 items at the bound: last event %s", s.Last().Type)
					}
				}
			})
		}
	}
}

// TestForEachRoomOldRules: a run recorded before the check replays as it ran, so a history
// of a large for_each an older wend left in flight is not refused as nondeterministic.
func TestForEachRoomOldRules(t *testing.T) {
	src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    steps: [{activity: p.x}]\n"
	w := sim.Load(t, src)
	st := history.Started{WorkflowID: "wf", RunID: "run1", Input: history.MustData(items(30_000)), SpecFile: "test.wend.yaml",
		SpecSource: src, ExecutionStarted: sim.T0, Rules: history.RulesMaxBoundsJitter}
	r := interpreter.New(w, st)
	out, err := r.Apply(history.Event{Type: history.WorkflowStarted, Time: sim.T0, Data: history.MustData(st)})
	if err != nil || len(out) != 1 || out[0].Type != history.ActivityScheduled {
		t.Fatalf("decisions %v, %v; want the first item's activity", out, err)
	}
}

// TestForEachRoomMessageByRules: the failure's text is part of the recorded StepFailed, so a run
// recorded before the shard hint keeps its old text and replays; new runs suggest shard.
func TestForEachRoomMessageByRules(t *testing.T) {
	src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    steps: [{activity: p.x}]\n"
	w := sim.Load(t, src)
	for _, tc := range []struct {
		rules int
		want  string
	}{
		{history.RulesForEachRoom, "; use smaller batches, or a run_workflow child per batch, or continue_as_new"},
		{history.RulesShardHint, "; give it shard: N to run its items in child runs of N, or continue_as_new"},
	} {
		st := history.Started{WorkflowID: "wf", RunID: "run1", Input: history.MustData(items(30_000)), SpecFile: "test.wend.yaml",
			SpecSource: src, ExecutionStarted: sim.T0, Rules: tc.rules}
		start := history.Event{Seq: 1, Type: history.WorkflowStarted, Time: sim.T0, Data: history.MustData(st)}
		out, err := interpreter.New(w, st).Apply(start)
		if err != nil || len(out) == 0 || out[0].Type != history.StepFailed || !strings.HasSuffix(
			mustFailure(t, out[0]).Message, tc.want) {
			t.Fatalf("rules %d: decisions %v, %v; want a StepFailed ending %q", tc.rules, out, err, tc.want)
		}
		evs := []history.Event{start}
		for i, d := range out {
			d.Seq = uint64(i + 2)
			evs = append(evs, d)
		}
		if err := interpreter.New(w, st).Replay(evs); err != nil {
			t.Fatalf("rules %d: replay: %v", tc.rules, err)
		}
	}
}

func mustFailure(t *testing.T, ev history.Event) history.Failure {
	t.Helper()
	af, err := history.DataOf[history.AttemptFailure](ev)
	if err != nil {
		t.Fatal(err)
	}
	return af.Failure
}
