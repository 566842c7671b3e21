package engine

import (
	"context"
	"testing"

	"github.com/wendflow/wend/history"
)

// A signal taken live must replay: SignalApplied records the seq of the SignalReceived it
// took, so that seq has to be known when the input is applied, not only when it is committed.
// Before the fix, a run that had taken a signal and still waited was blocked by the next
// Recover (replay decided received_seq N where the history said 0).
func TestSignalTakenLiveReplays(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}, {wait_for_signal: go}]\n")
	r := h.start(f, "s", "null")
	if err := h.e.Signal(context.Background(), "s", "go", nil); err != nil {
		t.Fatal(err)
	}
	evs, _ := h.store.Events(r.RunID, 0)
	var received uint64
	for _, ev := range evs {
		switch ev.Type {
		case history.SignalReceived:
			received = ev.Seq
		case history.SignalApplied:
			s, _ := history.DataOf[history.Signal](ev)
			if s.ReceivedSeq != received || received == 0 {
				t.Fatalf("SignalApplied names received seq %d, the signal is event %d", s.ReceivedSeq, received)
			}
		}
	}
	h.e.Close()
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || rep.Resumed != 1 || len(rep.Blocked) != 0 {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	if err := h.e.Signal(context.Background(), "s", "go", nil); err != nil {
		t.Fatal(err)
	}
	if done := h.wait("s"); done.Status != history.StatusCompleted {
		t.Fatalf("run %s", done.Status)
	}
}
