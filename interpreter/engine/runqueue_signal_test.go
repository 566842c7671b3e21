package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wendflow/wend/history"
)

// Signals to a queued run are accepted (checked against the workflow's contract, deduplicated
// by id), kept durably while it waits, and recorded in the order they came when it starts.
func TestRunQueueSignals(t *testing.T) {
	type send struct {
		data    string
		id      string
		dup     bool // the engine answers it is a resend
		refused bool // the contract refuses it
	}
	for _, tc := range []struct {
		name    string
		sends   []send
		restart bool // the engine stops and another resumes while the run is queued
		parked  bool // the signals go through a parked engine (the CLI's, no serve) meanwhile
	}{
		{"in order", []send{{data: `{"n": 1}`}, {data: `{"n": 2}`}}, false, false},
		{"a resend by id is taken once", []send{{data: `{"n": 1}`, id: "s1"}, {data: `{"n": 1}`, id: "s1", dup: true}, {data: `{"n": 2}`, id: "s2"}}, false, false},
		{"the contract holds", []send{{data: `{}`, refused: true}, {data: `{"n": 1}`}, {data: `{"n": 2}`}}, false, false},
		{"across a restart", []send{{data: `{"n": 1}`, id: "s1"}, {data: `{"n": 2}`}}, true, false},
		{"through a parked engine", []send{{data: `{"n": 1}`}, {data: `{"n": 2}`, id: "s"}, {data: `{"n": 2}`, id: "s", dup: true}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			f := h.write("sig.wend.yaml", "wend: v1\nname: sig\nconcurrency: {key: \"${{ input.c }}\", limit: 1}\n"+
				"signals: {go: {schema: {type: object, required: [n], properties: {n: {type: integer}}}}}\n"+
				"steps:\n  - {id: a, wait_for_signal: go}\n  - {id: b, wait_for_signal: go}\n"+
				"output: \"${{ [steps.a.output.n, steps.b.output.n] }}\"\n")
			h.start(f, "q1", `{"c": "ann"}`)
			if r := h.start(f, "q2", `{"c": "ann"}`); r.Status != history.StatusQueued {
				t.Fatalf("q2: %s, want queued", r.Status)
			}
			ctx := context.Background()
			if tc.parked {
				h.e.Close()
				h.openParked()
				if _, err := h.e.Recover(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for i, s := range tc.sends {
				dup, err := h.e.SendSignal(ctx, SignalRequest{WorkflowID: "q2", Name: "go", Data: json.RawMessage(s.data), ID: s.id})
				if (err != nil) != s.refused || dup != s.dup {
					t.Fatalf("send %d: duplicate %v, error %v; want duplicate %v, refused %v", i, dup, err, s.dup, s.refused)
				}
				if err != nil && errors.Is(err, ErrQueued) {
					t.Fatalf("send %d refused as queued: %v", i, err)
				}
			}
			if st := h.status("q2"); st != history.StatusQueued {
				t.Fatalf("q2 is %s after the signals: a signal must not start it", st)
			}
			if tc.restart {
				h.e.Close()
				h.open()
				if _, err := h.e.Recover(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range []string{`{"n": 7}`, `{"n": 8}`} {
				if err := h.e.Signal(ctx, "q1", "go", json.RawMessage(n)); err != nil {
					t.Fatal(err)
				}
			}
			r := waitStill(t, h, "q2")
			if got := h.output(r); r.Status != history.StatusCompleted || got != "[1,2]" {
				t.Fatalf("q2 %s with %s, want completed with [1,2]: the queued signals in order", r.Status, got)
			}
			if n := h.e.QueuedRuns(); n != 0 {
				t.Fatalf("%d still queued", n)
			}
		})
	}
}

// A signal to a queued run that is then cancelled goes with it: the run closes with no
// history, and a later signal finds it closed.
func TestRunQueueSignalThenCancel(t *testing.T) {
	h := newHarness(t)
	f := keyedFile(h, 1)
	newHolds(h)
	h.start(f, "a1", `{"c": "ann"}`)
	h.start(f, "a2", `{"c": "ann"}`)
	ctx := context.Background()
	if err := h.e.Signal(ctx, "a2", "go", nil); err != nil {
		t.Fatalf("signal to a queued run: %v", err)
	}
	if err := h.e.Cancel(ctx, "a2", "not now"); err != nil {
		t.Fatal(err)
	}
	r := waitStill(t, h, "a2")
	if evs, _ := h.store.Events(r.RunID, 0); r.Status != history.StatusCancelled || len(evs) != 0 {
		t.Fatalf("a2: %s with %d events", r.Status, len(evs))
	}
	if err := h.e.Signal(ctx, "a2", "go", nil); !errors.Is(err, ErrRunClosed) {
		t.Fatalf("signal after the cancel: %v, want ErrRunClosed", err)
	}
	if tasks, _ := h.store.Tasks(); len(tasks) > 0 {
		for _, task := range tasks {
			if task.RunID == r.RunID {
				t.Fatalf("task %s of the cancelled queued run left in the store", task.ID)
			}
		}
	}
}

// Signals sent while the queued run is being let in (its key's slot just freed) each reach it
// once, in order, whether they land in its queued task or in the started run.
func TestRunQueueSignalsRaceTheStart(t *testing.T) {
	for i := range 10 {
		h := newHarness(t)
		f := h.write("sig.wend.yaml", "wend: v1\nname: sig\nconcurrency: {key: \"${{ input.c }}\", limit: 1}\n"+
			"steps:\n  - {id: a, wait_for_signal: go}\n  - {id: b, wait_for_signal: go}\n"+
			"output: \"${{ [steps.a.output, steps.b.output] }}\"\n")
		h.start(f, "q1", `{"c": "ann"}`)
		h.start(f, "q2", `{"c": "ann"}`)
		ctx := context.Background()
		sent := make(chan error, 1)
		go func() {
			for _, n := range []string{"1", "2"} {
				if err := h.e.Signal(ctx, "q2", "go", json.RawMessage(n)); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		for _, n := range []string{"7", "8"} {
			if err := h.e.Signal(ctx, "q1", "go", json.RawMessage(n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-sent; err != nil {
			t.Fatalf("round %d: signal to q2: %v", i, err)
		}
		r := waitStill(t, h, "q2")
		if got := h.output(r); got != "[1,2]" {
			t.Fatalf("round %d: q2 %s with %s, want [1,2]", i, r.Status, got)
		}
		h.e.Close()
	}
}
