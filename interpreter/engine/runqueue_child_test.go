package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

// A run_workflow child whose workflow declares `concurrency:` waits for its key's slot like
// any start, its parent's step waiting meanwhile; cancelled while queued, it fails the
// parent's step as a cancelled child does; one whose key its own parent holds fails at once.
func TestRunQueueChildren(t *testing.T) {
	h := newHarness(t)
	hs := newHolds(h)
	child := keyedFile(h, 1)
	parent := h.write("parent.wend.yaml", "wend: v1\nname: parent\n"+
		"steps: [{id: k, run_workflow: ./keyed.wend.yaml, with: {c: ann}}]\noutput: \"${{ steps.k.output }}\"\n")
	ctx := context.Background()
	childOf := func(parentID string) history.Run {
		t.Helper()
		var got history.Run
		waitFor(t, "the child of "+parentID, func() bool {
			runs, _ := h.store.Runs(history.RunFilter{})
			p := h.status(parentID)
			for _, r := range runs {
				if r.ParentRunID != "" && r.Name == "keyed" && p != "" {
					if pr, _ := h.store.Runs(history.RunFilter{WorkflowID: parentID}); len(pr) > 0 && pr[0].RunID == r.ParentRunID {
						got = r
						return true
					}
				}
			}
			return false
		})
		return got
	}

	t.Run("waits for the slot", func(t *testing.T) {
		h.start(child, "top", `{"c": "ann"}`)
		waitFor(t, "top called", func() bool { return len(hs.begun("ann")) == 1 })
		h.start(parent, "p1", "null")
		c := childOf("p1")
		if c.Status != history.StatusQueued {
			t.Fatalf("child %s: %s, want queued while top holds the key", c.WorkflowID, c.Status)
		}
		if qi, ok := h.e.Queued(c.WorkflowID); !ok || qi.Key != "ann" || qi.Running != 1 {
			t.Fatalf("child queued %+v %v", qi, ok)
		}
		hs.release("top")
		waitFor(t, "the child called", func() bool { return len(hs.begun("ann")) == 2 })
		if got := hs.begun("ann"); got[1] != c.WorkflowID {
			t.Fatalf("calls %v, want the child's second", got)
		}
		hs.release(c.WorkflowID)
		if r := waitStill(t, h, "p1"); r.Status != history.StatusCompleted || h.output(r) != "null" {
			t.Fatalf("p1 %s: %s", r.Status, h.output(r))
		}
	})

	t.Run("cancelled while queued", func(t *testing.T) {
		h.start(child, "top2", `{"c": "ann"}`)
		waitFor(t, "top2 called", func() bool { return len(hs.begun("ann")) == 3 })
		h.start(parent, "p2", "null")
		c := childOf("p2")
		if c.Status != history.StatusQueued {
			t.Fatalf("child: %s, want queued", c.Status)
		}
		if err := h.e.Cancel(ctx, "p2", "stop"); err != nil {
			t.Fatal(err)
		}
		if r := waitStill(t, h, "p2"); r.Status != history.StatusCancelled {
			t.Fatalf("p2: %s, want cancelled", r.Status)
		}
		cr := waitStill(t, h, c.WorkflowID)
		if evs, _ := h.store.Events(cr.RunID, 0); cr.Status != history.StatusCancelled || len(evs) != 0 {
			t.Fatalf("child: %s with %d events, want cancelled unstarted", cr.Status, len(evs))
		}
		hs.release("top2")
		waitStill(t, h, "top2")
		if n := h.e.QueuedRuns(); n != 0 {
			t.Fatalf("%d still queued", n)
		}
	})

	t.Run("a run of its name it was started from holds the key", func(t *testing.T) {
		// Two files of one name share its keys; run_workflow cycles are refused, not this.
		self := h.write("outer.wend.yaml", "wend: v1\nname: dup\nconcurrency: {key: \"${{ input.c }}\"}\n"+
			"steps: [{run_workflow: ./inner.wend.yaml, with: {c: \"${{ input.c }}\"}}]\n")
		h.write("inner.wend.yaml", "wend: v1\nname: dup\nconcurrency: {key: \"${{ input.c }}\"}\nsteps: [{delay: 1s}]\n")
		h.start(self, "s1", `{"c": "ann"}`)
		r := waitStill(t, h, "s1")
		if out := h.output(r); r.Status != history.StatusFailed || !strings.Contains(out, "would never start") {
			t.Fatalf("s1 %s: %s, want failed: the child would never start", r.Status, out)
		}
	})
}

// A queued child survives a restart: the next engine starts it when its key has room, and its
// end reaches the parent's step.
func TestRunQueueChildSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	hs := newHolds(h)
	child := keyedFile(h, 1)
	parent := h.write("parent.wend.yaml", "wend: v1\nname: parent\n"+
		"steps: [{id: k, run_workflow: ./keyed.wend.yaml, with: {c: ann}}]\noutput: \"${{ steps.k.output }}\"\n")
	h.start(child, "top", `{"c": "ann"}`)
	waitFor(t, "top called", func() bool { return len(hs.begun("ann")) == 1 })
	h.start(parent, "p", "null")
	var c history.Run
	waitFor(t, "the child queued", func() bool {
		runs, _ := h.store.Runs(history.RunFilter{Status: history.StatusQueued})
		if len(runs) == 1 {
			c = runs[0]
		}
		return len(runs) == 1
	})
	h.e.Close()
	h.open()
	if _, err := h.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if qi, ok := h.e.Queued(c.WorkflowID); !ok || qi.Running != 1 {
		t.Fatalf("child after restart: %+v %v", qi, ok)
	}
	hs.release("top")
	waitFor(t, "the child called", func() bool { return slices.Contains(hs.begun("ann"), c.WorkflowID) })
	hs.release(c.WorkflowID)
	if r := waitStill(t, h, "p"); r.Status != history.StatusCompleted {
		t.Fatalf("p: %s", r.Status)
	}
	if got := hs.begun("ann"); !slices.Equal(got, []string{"top", "top", c.WorkflowID}) {
		t.Fatalf("calls %v: top (cut by the stop, made again), then the child", got)
	}
}
