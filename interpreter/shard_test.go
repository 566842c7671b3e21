package interpreter_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// shardTree plays a parent run and the shard children it starts, as the engine does: each
// ChildWorkflowScheduled with a shard starts a child run of the parent's text, whose
// activities answer is given, and whose outcome is fed back to the parent.
type shardTree struct {
	parent   *sim.Sim
	children []*sim.Sim
	answer   sim.Answer
}

func (tr *shardTree) run(t *testing.T) {
	t.Helper()
	for i := 0; i < 10_000; i++ {
		tr.parent.RunActivities(tr.answer)
		sched := tr.openChild()
		if sched == nil {
			return
		}
		cs, err := history.DataOf[history.ChildSchedule](*sched)
		if err != nil || cs.Shard == nil {
			t.Fatalf("child schedule %s: %v %+v", sched.Data, err, cs)
		}
		pst, _ := history.DataOf[history.Started](tr.parent.Events[0])
		st := history.Started{WorkflowID: cs.WorkflowID, RunID: "child" + cs.WorkflowID, Input: cs.Input,
			SpecFile: cs.SpecFile, SpecSource: pst.SpecSource, SpecSHA256: pst.SpecSHA256, ParentRunID: pst.RunID,
			ParentStep: sched.Step, ExecutionStarted: sim.T0, Rules: history.RulesCurrent, Shard: cs.Shard}
		c := sim.Start(t, st)
		c.RunActivities(tr.answer)
		tr.children = append(tr.children, c)
		closed := c.Closed(t)
		ev := history.Event{Type: history.ChildWorkflowCompleted, Step: sched.Step,
			Data: history.MustData(history.Closed{Output: closed.Output, RunID: st.RunID})}
		if closed.Failure != nil {
			ev.Type, ev.Data = history.ChildWorkflowFailed, history.MustData(history.Closed{Failure: closed.Failure, RunID: st.RunID})
		}
		tr.parent.Apply(ev)
	}
	t.Fatal("shard tree did not settle")
}

// openChild is the parent's child schedule that has no outcome yet, or nil.
func (tr *shardTree) openChild() *history.Event {
	var open *history.Event
	for i, ev := range tr.parent.Events {
		switch ev.Type {
		case history.ChildWorkflowScheduled:
			open = &tr.parent.Events[i]
		case history.ChildWorkflowCompleted, history.ChildWorkflowFailed, history.ChildWorkflowCancelRequested:
			if open != nil && open.Step == ev.Step {
				open = nil
			}
		}
	}
	if tr.parent.Last().Type.Terminal() {
		return nil
	}
	return open
}

func (tr *shardTree) replayOK(t *testing.T) {
	t.Helper()
	tr.parent.ReplayOK(t)
	for _, c := range tr.children {
		c.ReplayOK(t)
	}
}

func count(evs []history.Event, typ history.EventType) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// itemAndIndex answers each activity with its input, which the specs make [item, index, ...].
func itemAndIndex(_ string, in any, _ int) (any, *history.Failure) { return in, nil }

// TestShardedForEach: a for_each with shard runs its items in child runs of N items, one child
// at a time; its output is every item's output in item order, `index` is global, and the
// parent's history holds two events a child whatever the item count.
func TestShardedForEach(t *testing.T) {
	cases := []struct {
		name, step       string
		n, wantChildren  int
		wantParentEvents int
	}{
		{"slices of 3 over 10 items", "shard: 3\n    concurrency: 2", 10, 4, 1 + 2*4 + 1},
		{"one slice holds all", "shard: 100", 10, 1, 4},
		{"slices of 1", "shard: 1", 5, 5, 12},
		{"no items", "shard: 5", 0, 0, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := sim.Head + "steps:\n  - set: {k: before}\n    activity: p.prep\n" +
				"  - id: loop\n    for_each: \"${{ input.items }}\"\n    " + tc.step +
				"\n    steps:\n      - id: a\n        activity: p.x\n        with: [\"${{ item }}\", \"${{ index }}\", \"${{ input.tag }}\", \"${{ state.k }}\"]\n" +
				"      - activity: p.y\n        with: \"${{ steps.a.output }}\"\n" +
				"output: \"${{ steps.loop.output }}\"\n"
			in := items(tc.n)
			in["tag"] = "t"
			tr := &shardTree{parent: sim.New(t, src, in), answer: itemAndIndex}
			tr.run(t)
			var want []any
			for i := range tc.n {
				want = append(want, []any{float64(i), float64(i), "t", "before"})
			}
			got := tr.parent.Output(t)
			if tc.n == 0 {
				want = []any{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("output %v, want %v", got, want)
			}
			if len(tr.children) != tc.wantChildren {
				t.Errorf("%d children, want %d", len(tr.children), tc.wantChildren)
			}
			// The prep activity's two events are the parent's besides Started, shards and close.
			if got := len(tr.parent.Events) - 2; got != tc.wantParentEvents {
				t.Errorf("parent history has %d events besides prep, want %d", got, tc.wantParentEvents)
			}
			if n := count(tr.parent.Events, history.ActivityScheduled); n != 1 {
				t.Errorf("parent scheduled %d activities, want only prep", n)
			}
			for k, c := range tr.children {
				st, _ := history.DataOf[history.Started](c.Events[0])
				if !strings.HasSuffix(st.WorkflowID, "/run1/steps[1]#shard"+string(rune('0'+k))) {
					t.Errorf("child %d workflow id %s", k, st.WorkflowID)
				}
				// Instance paths carry the global item number.
				first := ""
				for _, ev := range c.Events {
					if ev.Type == history.ActivityScheduled {
						first = ev.Step
						break
					}
				}
				if want := "steps[1]@" + itoa(st.Shard.Offset) + ".steps[0]"; first != want {
					t.Errorf("child %d first activity at %s, want %s", k, first, want)
				}
			}
			tr.replayOK(t)
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestShardedForEachNestedReadsOuterItem: a sharded for_each inside another for_each reads
// the outer item in its child runs (the loop variables travel in the child's input).
func TestShardedForEachNestedReadsOuterItem(t *testing.T) {
	src := sim.Head + "output: \"${{ steps.outer.output }}\"\nsteps:\n  - id: outer\n    for_each: [a, b]\n    as: outer\n    steps:\n" +
		"      - for_each: [1, 2, 3]\n        shard: 2\n        steps: [{activity: p.x, with: \"${{ [outer, item, index] }}\"}]\n"
	tr := &shardTree{parent: sim.New(t, src, nil), answer: itemAndIndex}
	tr.run(t)
	want := []any{
		[]any{[]any{"a", 1.0, 0.0}, []any{"a", 2.0, 1.0}, []any{"a", 3.0, 2.0}},
		[]any{[]any{"b", 1.0, 0.0}, []any{"b", 2.0, 1.0}, []any{"b", 3.0, 2.0}},
	}
	if got := tr.parent.Output(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
	if len(tr.children) != 4 {
		t.Fatalf("%d children, want 4", len(tr.children))
	}
	tr.replayOK(t)
}

// TestShardedForEachChildFails: a failed item fails its child run, which fails the step as a
// failed run_workflow child does (category child_workflow); no later child starts, and the
// for_each's catch runs in the parent.
func TestShardedForEachChildFails(t *testing.T) {
	boom := func(_ string, in any, _ int) (any, *history.Failure) {
		if l, _ := in.([]any); len(l) > 0 && l[0] == 4.0 {
			return nil, &history.Failure{Category: history.CategoryActivity, Type: "Boom", Message: "item 4", NonRetryable: true}
		}
		return in, nil
	}
	for _, withCatch := range []bool{false, true} {
		t.Run(map[bool]string{false: "fails the run", true: "catch runs in the parent"}[withCatch], func(t *testing.T) {
			catch := ""
			if withCatch {
				catch = "    catch: [{activity: p.caught, with: \"${{ error.message }}\"}]\n"
			}
			src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    shard: 3\n" + catch +
				"    steps: [{activity: p.x, with: [\"${{ item }}\"], retry: {tries: 1}}]\n"
			tr := &shardTree{parent: sim.New(t, src, items(10)), answer: boom}
			tr.run(t)
			if len(tr.children) != 2 {
				t.Fatalf("%d children started, want 2 (the one with item 4 fails, none after it)", len(tr.children))
			}
			c := tr.parent.Closed(t)
			if withCatch {
				if tr.parent.Last().Type != history.WorkflowCompleted || count(tr.parent.Events, history.ActivityScheduled) != 1 {
					t.Fatalf("want the catch activity and a completed run, got %s", tr.parent.Last().Type)
				}
			} else if c.Failure == nil || c.Failure.Category != history.CategoryChildWorkflow || !strings.Contains(c.Failure.Message, "item 4") {
				t.Fatalf("closed %s %+v", tr.parent.Last().Type, c.Failure)
			}
			tr.replayOK(t)
		})
	}
}

// TestShardedForEachCancel: cancelling the parent asks for the open child's cancel; a shard
// child cancelled runs none of the workflow's on_cancel steps (the parent runs them).
func TestShardedForEachCancel(t *testing.T) {
	src := sim.Head + "on_cancel: [{activity: p.cleanup}]\nsteps:\n  - for_each: \"${{ input.items }}\"\n    shard: 3\n    concurrency: 3\n    steps: [{activity: p.x}]\n"
	parent := sim.New(t, src, items(10))
	sched := parent.Last()
	if sched.Type != history.ChildWorkflowScheduled {
		t.Fatalf("last event %s, want the first child's schedule", sched.Type)
	}
	cs, _ := history.DataOf[history.ChildSchedule](sched)
	if want := `{"items":[0,1,2]}`; string(cs.Input) != want {
		t.Fatalf("child input %s, want %s: a body that reads neither input nor state is given neither", cs.Input, want)
	}
	pst, _ := history.DataOf[history.Started](parent.Events[0])
	child := sim.Start(t, history.Started{WorkflowID: cs.WorkflowID, RunID: "c0", Input: cs.Input, SpecFile: cs.SpecFile,
		SpecSource: pst.SpecSource, ExecutionStarted: sim.T0, Rules: history.RulesCurrent, Shard: cs.Shard})

	out := parent.Apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: "stop"})})
	var cancelled []string
	for _, d := range out {
		if d.Type == history.ChildWorkflowCancelRequested {
			cr, _ := history.DataOf[history.CancelRequest](d)
			cancelled = append(cancelled, cr.WorkflowID)
		}
	}
	if len(cancelled) != 1 || cancelled[0] != cs.WorkflowID {
		t.Fatalf("cancel requests %v, want the open child %s", cancelled, cs.WorkflowID)
	}
	child.Cancel("parent run ended")
	if child.Last().Type != history.WorkflowCancelled {
		t.Fatalf("child closed with %s", child.Last().Type)
	}
	if n := count(child.Events, history.ActivityScheduled); n != 3 {
		t.Fatalf("child scheduled %d activities, want its 3 items and no on_cancel step", n)
	}
	parent.RunActivities(sim.Echo)
	if parent.Last().Type != history.WorkflowCancelled || count(parent.Events, history.ActivityScheduled) != 1 {
		t.Fatalf("parent: last %s, %d activities (want on_cancel's one)", parent.Last().Type, count(parent.Events, history.ActivityScheduled))
	}
	parent.ReplayOK(t)
	child.ReplayOK(t)
}

// TestShardedForEachRoom: the start check counts the parent's two events a child, not the
// items': 1,000,000 items in shards of 100 fit; in shards of 1 they do not, and the step
// fails at once with structural_limit.
func TestShardedForEachRoom(t *testing.T) {
	for _, tc := range []struct {
		shard int
		fits  bool
	}{{100, true}, {1, false}} {
		src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    shard: " + itoa(tc.shard) + "\n    steps: [{activity: p.x}]\n"
		s := sim.New(t, src, items(1_000_000))
		if got := s.Last().Type == history.ChildWorkflowScheduled; got != tc.fits {
			c, _ := history.DataOf[history.Closed](s.Last())
			t.Fatalf("shard %d: last %s %+v, want fits=%v", tc.shard, s.Last().Type, c.Failure, tc.fits)
		}
		if !tc.fits {
			c := s.Closed(t)
			if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "1000000 shards of 1 needs at least 2000000") {
				t.Fatalf("failure %+v", c.Failure)
			}
		}
	}
}

// TestShardChildOfMissingStep: a shard child whose Started names no sharded for_each (a
// corrupt or mismatched history) is refused with an error, not a panic.
func TestShardChildOfMissingStep(t *testing.T) {
	src := sim.Head + "steps: [{activity: p.x}]\n"
	w := sim.Load(t, src)
	st := history.Started{WorkflowID: "c", RunID: "c", SpecSource: src, Input: json.RawMessage(`{"items":[1]}`),
		Shard: &history.ShardRef{Path: "steps[0]"}}
	_, err := interpreter.New(w, st).Apply(history.Event{Type: history.WorkflowStarted, Data: history.MustData(st)})
	if err == nil || !strings.Contains(err.Error(), "not a for_each with shard") {
		t.Fatalf("err %v", err)
	}
}

// TestShardInputOverPayloadLimit: a slice whose child input would pass the payload limit
// fails the step with structural_limit before its child is scheduled.
func TestShardInputOverPayloadLimit(t *testing.T) {
	big := strings.Repeat("x", 1000)
	l := make([]string, 3000)
	for i := range l {
		l[i] = big
	}
	src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    shard: 2500\n    steps: [{activity: p.x}]\n"
	s := sim.New(t, src, map[string]any{"items": l[:2000]})
	if s.Last().Type != history.ChildWorkflowScheduled {
		t.Fatalf("2,000 items of 1 KB: last %s", s.Last().Type)
	}
	s = sim.New(t, src, map[string]any{"items": l})
	c := s.Closed(t)
	if c.Failure == nil || c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "use a smaller shard") ||
		count(s.Events, history.ChildWorkflowScheduled) != 0 {
		t.Fatalf("closed %s %+v", s.Last().Type, c.Failure)
	}
}
