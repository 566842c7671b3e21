package engine

import (
	"context"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestStartedChildNeedsNoTask: once a run_workflow child has started, the parent waits for its
// outcome, which the child delivers, not a task; wend check must not report the child's start
// task as lacking, and a repair must neither rebuild it nor record RepairRequested in the
// parent (each repair at start used to do both, once for every parent with a child running).
func TestStartedChildNeedsNoTask(t *testing.T) {
	h := newHarness(t)
	h.write("child.wend.yaml", head+"steps: [{delay: 1h}]\n")
	f := h.write("parent.wend.yaml", head+"steps: [{run_workflow: ./child.wend.yaml}]\n")
	parent := h.start(f, "parent", "null")
	h.exists("parent/" + parent.RunID + "/steps[0]")
	ps, err := CheckTasks(h.store)
	if err != nil || len(ps) != 0 {
		t.Fatalf("check of a parent whose child is running: %q %v", ps, err)
	}
	rep, err := h.e.Repair(context.Background(), "")
	if err != nil || len(rep.Rebuilt) != 0 {
		t.Fatalf("repair rebuilt %q (%v); want nothing", rep.Rebuilt, err)
	}
	if h.hasEvent(parent.RunID, history.RepairRequested) {
		t.Fatal("the parent recorded RepairRequested for a child that is running")
	}
}
