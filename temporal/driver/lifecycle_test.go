package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

const canSrc = sim.Head + `timeouts: {execution: 3h}
steps:
  - id: a
    activity: p.echo
    with: "${{ input.i }}"
  - if: "${{ input.i >= 2 }}"
    wait_for_signal: never
  - continue_as_new: true
    with: {i: "${{ input.i + 1 }}"}
`

// nextRun reads the start input of the run a ContinueAsNewError asks for.
func nextRun(t *testing.T, err error) wire.StartInput {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("workflow error %v, want continue-as-new", err)
	}
	if can.WorkflowType.Name != wire.WorkflowType {
		t.Fatalf("continues as %q", can.WorkflowType.Name)
	}
	var in wire.StartInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestContinueAsNewAndExecutionTimeout: each run continues as new with the same spec texts
// and the first run's start, so the execution timeout spans the chain: the third run, started
// an hour in, times out 3h after the first started.
func TestContinueAsNewAndExecutionTimeout(t *testing.T) {
	in := startInput(canSrc, map[string]any{"i": 0}, childSpecs)
	start := sim.T0
	for i := range 3 {
		e, _ := newEnv(t)
		e.SetStartTime(start)
		evs := run(t, e, in)
		if i < 2 {
			if evs[len(evs)-1].Type != history.WorkflowContinuedAsNew {
				t.Fatalf("run %d closed with %s", i, evs[len(evs)-1].Type)
			}
			next := nextRun(t, e.GetWorkflowError())
			if !next.Started.ExecutionStarted.Equal(sim.T0) || len(next.Specs) != len(childSpecs) ||
				next.Started.SpecSource != canSrc || string(next.Started.Input) != fmt.Sprintf(`{"i":%d}`, i+1) {
				t.Fatalf("run %d continues with %+v", i, next)
			}
			in = next
			start = start.Add(30 * time.Minute)
			continue
		}
		c := wendFailure(t, e, history.WorkflowTimedOut)
		if c.TimeoutKind != interpreter.ExecutionTimeout {
			t.Fatalf("timed out with %q", c.TimeoutKind)
		}
		if at := evs[len(evs)-1].Time; !at.Equal(sim.T0.Add(3 * time.Hour)) {
			t.Fatalf("timed out at %s, want 3h after the first run's start", at)
		}
	}
}

func TestRunTimeout(t *testing.T) {
	src := sim.Head + `timeouts: {run: 10m}
steps:
  - activity: p.echo
    with: 1
  - wait_for_signal: never
`
	e, _ := newEnv(t)
	// Temporal says Failed; the memo tells a list it timed out.
	e.OnUpsertMemo(map[string]any{wire.MemoClosedReason: history.ClosedTimedOut}).Return(nil).Once()
	evs := run(t, e, startInput(src, nil, nil))
	e.AssertExpectations(t)
	c := wendFailure(t, e, history.WorkflowTimedOut)
	if c.TimeoutKind != interpreter.RunTimeout || !evs[len(evs)-1].Time.Equal(sim.T0.Add(10*time.Minute)) {
		t.Fatalf("timed out %q at %s", c.TimeoutKind, evs[len(evs)-1].Time)
	}
	local := sim.New(t, src, nil)
	local.RunActivities(sim.Echo)
	local.FireTimers(sim.T0.Add(time.Hour))
	sameAsLocal(t, evs, local)
}

// TestBadStartFailsTheWorkflow: a spec that does not load, or an input it refuses, fails the
// workflow at once with a message naming the file and the problem, not a workflow task that
// panics and retries forever.
func TestBadStartFailsTheWorkflow(t *testing.T) {
	schema := sim.Head + "input:\n  type: object\n  required: [n]\nsteps:\n  - activity: p.echo\n"
	for _, tc := range []struct {
		name string
		in   wire.StartInput
		want []string
	}{
		{"invalid spec", startInput("wend: v1\nname: t\nsteps:\n  - activity: nope\n", nil, nil), []string{"InvalidSpec", "/flows/test.wend.yaml:4"}},
		{"input against the schema", startInput(schema, map[string]any{"m": 1}, nil), []string{"InvalidInput", "invalid input", "n"}},
		{"no spec at all", wire.StartInput{}, []string{"InvalidSpec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEnv(t)
			e.ExecuteWorkflow(wire.WorkflowType, tc.in)
			err := e.GetWorkflowError()
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("workflow error %v, want it to mention %q", err, w)
				}
			}
		})
	}
}

// TestNoInputIsTheEmptyObject: a run (or child) started without input gets {}, as the local
// engine gives it, so `input.n ?? 0` reads a missing field instead of failing on null.
func TestNoInputIsTheEmptyObject(t *testing.T) {
	src := sim.Head + `steps:
  - id: c
    run_workflow: ./defaults.wend.yaml
output: {mine: "${{ input.n ?? 0 }}", child: "${{ steps.c.output }}"}
`
	specs := map[string]string{"/flows/defaults.wend.yaml": "wend: v1\nname: d\nsteps:\n  - delay: 1s\noutput: \"${{ input.n ?? 7 }}\"\n"}
	for _, raw := range []json.RawMessage{nil, json.RawMessage("null")} {
		e, _ := newEnv(t)
		in := startInput(src, nil, specs)
		in.Started.Input = raw
		evs := run(t, e, in)
		if got := output(t, e); got != `{"child":7,"mine":0}` {
			t.Fatalf("input %q: output %s", raw, got)
		}
		if st, _ := history.DataOf[history.Started](evs[0]); string(st.Input) != "{}" {
			t.Fatalf("input %q recorded as %s", raw, st.Input)
		}
	}
}

// TestChildIDsPerContinueAsNewIteration: each iteration of a continue_as_new loop starts its
// own child, under an id derived from the iteration's run (a repeated id made the local
// engine hand an iteration the previous one's child outcome), and each continued run decides
// by today's rules. (The test environment gives every run the same run id, so the ids are
// checked for the run's id, which Temporal makes unique per run.)
func TestChildIDsPerContinueAsNewIteration(t *testing.T) {
	src := sim.Head + `steps:
  - id: c
    run_workflow: ./child.wend.yaml
    with: {n: "${{ input.i }}"}
  - if: "${{ input.i >= 2 }}"
    wait_for_signal: never
    timeout: 1s
    catch: []
  - if: "${{ input.i < 2 }}"
    continue_as_new: true
    with: {i: "${{ input.i + 1 }}"}
output: "${{ steps.c.output }}"
`
	in := startInput(src, map[string]any{"i": 0}, childSpecs)
	in.Started.Rules = history.RulesCurrent // as the backend starts runs
	for i := range 3 {
		e, _ := newEnv(t)
		evs := run(t, e, in)
		st, _ := history.DataOf[history.Started](evs[0])
		if id := childIDOf(t, evs, "steps[0]"); st.RunID == "" || !strings.Contains(id, st.RunID) {
			t.Fatalf("iteration %d: child id %q does not derive from the run %q", i, id, st.RunID)
		}
		done := ofType(evs, history.ChildWorkflowCompleted)
		if c, _ := history.DataOf[history.Closed](done[0]); string(c.Output) != fmt.Sprint(2*i) {
			t.Fatalf("iteration %d: child returned %s, want %d", i, c.Output, 2*i)
		}
		if i == 2 {
			break
		}
		next := nextRun(t, e.GetWorkflowError())
		if next.Started.Rules != history.RulesCurrent {
			t.Fatalf("iteration %d continues under rules %d, want %d", i, next.Started.Rules, history.RulesCurrent)
		}
		in = next
	}
}
