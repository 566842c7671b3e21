package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

func TestSignalWithIDIsAppliedOnce(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps:\n  - {id: a, wait_for_signal: go}\n  - {id: b, wait_for_signal: go, timeout: 1h}\noutput: \"${{ [steps.a.output, steps.b.output] }}\"\n")
	h.start(f, "s", "null")
	ctx := context.Background()
	for _, d := range []string{`1`, `1`, `2`} { // the second send is a retry of the first
		id := "sig-" + d
		if _, err := h.e.SendSignal(ctx, SignalRequest{WorkflowID: "s", Name: "go", Data: json.RawMessage(d), ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	r := h.wait("s")
	if got := h.output(r); got != "[1,2]" {
		t.Fatalf("output %s", got)
	}
}

func TestTerminateSkipsCompensation(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"on_cancel: [{activity: p.on_cancel}]\nsteps:\n  - {activity: p.a, compensate_with: {activity: p.undo}}\n  - wait_for_signal: go\n")
	h.start(f, "t", "null")
	for h.acts.count("a") == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if err := h.e.Terminate(context.Background(), "t", "ops"); err != nil {
		t.Fatal(err)
	}
	r := h.wait("t")
	if r.Status != history.StatusCancelled || r.ClosedReason != history.ClosedTerminated || h.acts.count("undo")+h.acts.count("on_cancel") != 0 {
		t.Fatalf("status %s/%s, undo %d", r.Status, r.ClosedReason, h.acts.count("undo"))
	}
}

func TestChildCancelledWithParent(t *testing.T) {
	h := newHarness(t)
	h.write("child.wend.yaml", head+"steps: [{wait_for_signal: never}]\n")
	f := h.write("parent.wend.yaml", head+"steps: [{run_workflow: ./child.wend.yaml}]\n")
	p := h.start(f, "p", "null")
	childID := "p/" + p.RunID + "/steps[0]"
	var kids []history.Run
	for len(kids) == 0 {
		kids, _ = h.store.Runs(history.RunFilter{WorkflowID: childID})
		time.Sleep(time.Millisecond)
	}
	if err := h.e.Cancel(context.Background(), "p", "stop"); err != nil {
		t.Fatal(err)
	}
	h.wait("p")
	child := h.wait(childID)
	if child.Status != history.StatusCancelled {
		t.Fatalf("child %s", child.Status)
	}
}

func TestHeartbeatProgressReachesTheNextTry(t *testing.T) {
	h := newHarness(t)
	var seen []string
	h.acts.fns["resume"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		seen = append(seen, string(c.LastProgress))
		if c.Attempt == 2 {
			return json.RawMessage(`"done"`), nil
		}
		hb := ctx.Value(hbKey{}).(func(history.Heartbeat))
		hb(history.Heartbeat{Progress: json.RawMessage(`{"page":7}`)})
		hb(history.Heartbeat{Progress: json.RawMessage(`{"page":8}`)}) // within a second: not recorded
		for !h.hasEvent(c.RunID, history.ActivityHeartbeatRecorded) {
			time.Sleep(time.Millisecond)
		}
		return nil, &history.ActivityError{Message: "crashed half way"}
	}
	f := h.write("w.wend.yaml", head+"steps: [{activity: p.resume, retry: {tries: 2, backoff: [5s]}}]\n")
	h.start(f, "hb", "null")
	r := h.wait("hb")
	if r.Status != history.StatusCompleted || len(seen) != 2 || seen[0] != "" || seen[1] != `{"page":7}` {
		t.Fatalf("status %s, progress seen by tries %q", r.Status, seen)
	}
	n := 0
	evs, _ := h.store.Events(r.RunID, 0)
	for _, e := range evs {
		if e.Type == history.ActivityHeartbeatRecorded {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d heartbeats recorded, want 1 (throttled)", n)
	}
}

type hbKey struct{}

func (h *harness) hasEvent(runID string, typ history.EventType) bool {
	evs, _ := h.store.Events(runID, 0)
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}
