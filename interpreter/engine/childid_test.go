package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestChildOfEachContinueAsNewIteration: a child's workflow id was the parent's
// workflow id + "/" + step path, the same in every continue_as_new iteration, so iterations 2
// and 3 found iteration 1's finished child and took its output. Each iteration's child must be
// its own run and return that iteration's number.
func TestChildOfEachContinueAsNewIteration(t *testing.T) {
	h := newHarness(t)
	var seen []string
	h.acts.fns["record"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
		h.acts.mu.Lock()
		seen = append(seen, string(c.Input))
		h.acts.mu.Unlock()
		return c.Input, nil
	}
	h.write("child.wend.yaml", head+"steps: [{id: c, activity: p.echo, with: \"${{ input.i }}\"}]\noutput: \"${{ steps.c.output }}\"\n")
	f := h.write("loop.wend.yaml", head+`
steps:
  - {id: k, run_workflow: ./child.wend.yaml, with: {i: "${{ input.i }}"}}
  - {activity: p.record, with: "${{ [input.i, steps.k.output] }}"}
  - {if: "${{ input.i < 3 }}", continue_as_new: true, with: {i: "${{ input.i + 1 }}"}}
output: "${{ steps.k.output }}"
`)
	h.start(f, "loop", `{"i": 1}`)
	r := h.waitChain("loop")
	if r.Status != history.StatusCompleted || h.output(r) != "3" {
		t.Fatalf("last iteration: %s, output %s; want completed with its own child's 3", r.Status, h.output(r))
	}
	if got := strings.Join(seen, " "); got != "[1,1] [2,2] [3,3]" {
		t.Fatalf("each iteration saw [iteration, child output]: %s", got)
	}
	// Three children, each started by a different iteration, named after its parent run.
	all, err := h.store.Runs(history.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]bool{}
	for _, run := range all {
		if run.WorkflowID == "loop" {
			parents[run.RunID] = true
		}
	}
	kids := 0
	for _, run := range all {
		if run.ParentRunID == "" {
			continue
		}
		kids++
		if !parents[run.ParentRunID] || run.WorkflowID != "loop/"+run.ParentRunID+"/steps[0]" {
			t.Errorf("child %s of run %s: want id loop/<parent run id>/steps[0]", run.WorkflowID, run.ParentRunID)
		}
	}
	if kids != 3 || len(parents) != 3 {
		t.Fatalf("%d children of %d parent runs, want 3 of 3", kids, len(parents))
	}
}

// waitChain waits for the last run of a continue_as_new chain to close. WaitClosed is not
// used: the chain's runs start at the same virtual instant, so "newest first" may name a
// continued run.
func (h *harness) waitChain(id string) history.Run {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a hang guard, not a measurement
	for time.Now().Before(deadline) {
		runs, err := h.store.Runs(history.RunFilter{WorkflowID: id})
		if err != nil {
			h.t.Fatal(err)
		}
		for _, r := range runs {
			if !r.Open() && r.Status != history.StatusContinued {
				return r
			}
		}
		time.Sleep(2 * time.Millisecond)
		h.clock.Advance(time.Second)
	}
	h.t.Fatalf("workflow %s did not close", id)
	return history.Run{}
}
