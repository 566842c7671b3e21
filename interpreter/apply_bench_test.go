package interpreter_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// stepSpec is a sequence of n activities, each reading the one before it, as a real
// workflow's steps do: the CPU of Apply on a step is decoding the outcome,
// evaluating the next step's input and encoding its schedule.
func stepSpec(n int) string {
	var b strings.Builder
	b.WriteString(sim.Head + "steps:\n  - {id: s0, activity: p.get, with: {order: \"${{ input.order }}\"}}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {id: s%d, activity: p.next, with: {order: \"${{ input.order }}\", prev: \"${{ steps.s%d.output.status }}\", n: %d}}\n", i, i-1, i)
	}
	return b.String()
}

// stepOutput is what each activity answers: a small record, as a plugin returns.
var stepOutput = json.RawMessage(`{"status":"ok","id":"A-1042","items":[{"sku":"x1","qty":2},{"sku":"y7","qty":1}],"total":42.5}`)

// BenchmarkApplyStep prices Run.Apply of one ActivityCompleted in a sequence: the decisions
// it yields are the next step's ActivityScheduled (reported per step).
func BenchmarkApplyStep(b *testing.B) {
	const steps = 100
	w := sim.Load(b, stepSpec(steps))
	st := history.Started{WorkflowID: "wf", RunID: "run1", Input: json.RawMessage(`{"order":"A-1042"}`), Rules: history.RulesCurrent, ExecutionStarted: sim.T0}
	result := history.MustData(history.ActivityResult{Output: stepOutput, PluginSHA256: strings.Repeat("ab", 32)})
	var r *interpreter.Run
	var sched history.Event
	i := steps
	for b.Loop() {
		if i == steps {
			b.StopTimer()
			r = interpreter.New(w, st)
			evs, err := r.Apply(history.Event{Seq: 1, Type: history.WorkflowStarted, Time: sim.T0, Data: history.MustData(st)})
			if err != nil || len(evs) != 1 {
				b.Fatal(evs, err)
			}
			sched, i = evs[0], 0
			b.StartTimer()
		}
		evs, err := r.Apply(history.Event{Type: history.ActivityCompleted, Time: sim.T0, Step: sched.Step,
			ActivityExecutionID: sched.ActivityExecutionID, Attempt: 1, Data: result})
		if err != nil || len(evs) != 1 {
			b.Fatal(evs, err)
		}
		sched = evs[0]
		i++
	}
}

// BenchmarkReplaySteps prices replaying a run of 20 such steps (the rebuild of an evicted
// run is this, after reading the history), reported per run.
func BenchmarkReplaySteps(b *testing.B) {
	const steps = 20
	w := sim.Load(b, stepSpec(steps))
	st := history.Started{WorkflowID: "wf", RunID: "run1", Input: json.RawMessage(`{"order":"A-1042"}`), Rules: history.RulesCurrent, ExecutionStarted: sim.T0}
	result := history.MustData(history.ActivityResult{Output: stepOutput, PluginSHA256: strings.Repeat("ab", 32)})
	r := interpreter.New(w, st)
	evs := []history.Event{{Seq: 1, Type: history.WorkflowStarted, Time: sim.T0, Data: history.MustData(st)}}
	for {
		in := evs[len(evs)-1]
		got, err := r.Apply(in)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range got {
			d.Seq = uint64(len(evs) + 1)
			evs = append(evs, d)
		}
		last := evs[len(evs)-1]
		if last.Type != history.ActivityScheduled {
			break
		}
		evs = append(evs, history.Event{Seq: uint64(len(evs) + 1), Type: history.ActivityCompleted, Time: sim.T0, Step: last.Step,
			ActivityExecutionID: last.ActivityExecutionID, Attempt: 1, Data: result})
	}
	if r.Closed() != history.WorkflowCompleted {
		b.Fatalf("run ended %q", r.Closed())
	}
	for b.Loop() {
		if err := interpreter.New(w, st).Replay(evs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestApplyStepAllocations: applying a step's outcome allocates at most 64 times (76
// with the outcome decoded twice by encoding/json and the schedule encoded by reflection; 60
// now, 63 under -race, 64 with the run's `run` map made at every evaluation): a bound on
// what every step of every run feeds the garbage collector.
func TestApplyStepAllocations(t *testing.T) {
	w := sim.Load(t, stepSpec(100))
	st := history.Started{WorkflowID: "wf", RunID: "run1", Input: json.RawMessage(`{"order":"A-1042"}`), Rules: history.RulesCurrent, ExecutionStarted: sim.T0}
	result := history.MustData(history.ActivityResult{Output: stepOutput, PluginSHA256: strings.Repeat("ab", 32)})
	r := interpreter.New(w, st)
	evs, err := r.Apply(history.Event{Seq: 1, Type: history.WorkflowStarted, Time: sim.T0, Data: history.MustData(st)})
	if err != nil || len(evs) != 1 {
		t.Fatal(evs, err)
	}
	sched := evs[0]
	allocs := testing.AllocsPerRun(50, func() {
		evs, err := r.Apply(history.Event{Type: history.ActivityCompleted, Time: sim.T0, Step: sched.Step,
			ActivityExecutionID: sched.ActivityExecutionID, Attempt: 1, Data: result})
		if err != nil || len(evs) != 1 || evs[0].Type != history.ActivityScheduled {
			t.Fatal(evs, err)
		}
		sched = evs[0]
	})
	if allocs > 64 {
		t.Fatalf("Apply of a step's outcome: %.0f allocations, over 64", allocs)
	}
}
