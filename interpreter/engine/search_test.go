package engine

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestSearchValuesFollowState: a run's record holds its search fields as its state changes,
// committed with the events that changed them; a value of the wrong type is a note on the
// record, not a failure; after a restart the replayed run computes the same values.
func TestSearchValuesFollowState(t *testing.T) {
	h := newHarness(t)
	f := h.write("order.wend.yaml", head+`
search:
  customer: {type: string, value: "${{ input.customer }}"}
  amount: {type: number, value: "${{ state.total }}"}
  paid_at: {type: time, value: "${{ state.paid_at }}"}
  tier: {type: number, value: "${{ state.tier }}"}
  vip: {type: bool, value: "${{ input.customer == 'ann' }}"}
steps:
  - id: a
    activity: p.echo
    with: {total: 12.5, paid_at: "2026-05-01T10:00:00+02:00"}
    set: {total: "${{ output.total }}", paid_at: "${{ output.paid_at }}", tier: gold}
  - wait_for_signal: more
    set: {total: "${{ state.total + signal }}"}
  - wait_for_signal: go
`)
	r := h.start(f, "order-1", `{"customer": "ann"}`)
	if want := map[string]any{"customer": "ann", "vip": true}; !reflect.DeepEqual(r.Search, want) {
		t.Fatalf("search at start = %v, want %v", r.Search, want)
	}
	want := map[string]any{"customer": "ann", "vip": true, "amount": 12.5, "paid_at": "2026-05-01T08:00:00Z"}
	rec := h.waitSearch(r.RunID, "amount")
	if !reflect.DeepEqual(rec.Search, want) {
		t.Fatalf("search after step a = %v, want %v", rec.Search, want)
	}
	if p := rec.SearchProblems["tier"]; p != "search field tier: got a string, want a number" {
		t.Fatalf("tier's problem = %q; problems %v", p, rec.SearchProblems)
	}

	h.e.Close() // a restart: the next engine replays the run and keeps computing its values
	h.open()
	if _, err := h.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Signal(context.Background(), "order-1", "more", json.RawMessage(`7.5`)); err != nil {
		t.Fatal(err)
	}
	want["amount"] = 20.0
	if rec := h.waitSearchValue(r.RunID, "amount", 20.0); !reflect.DeepEqual(rec.Search, want) {
		t.Fatalf("search after the signal = %v, want %v", rec.Search, want)
	}
	if err := h.e.Signal(context.Background(), "order-1", "go", nil); err != nil {
		t.Fatal(err)
	}
	done := h.wait("order-1")
	if done.Status != history.StatusCompleted || !reflect.DeepEqual(done.Search, want) {
		t.Fatalf("closed run: status %s search %v, want completed and %v", done.Status, done.Search, want)
	}
	runs, err := h.store.Runs(history.RunFilter{Search: []history.SearchCond{{Field: "customer", Op: "=", Value: "ann"}, {Field: "amount", Op: ">", Value: "15"}}})
	if err != nil || len(runs) != 1 || runs[0].RunID != r.RunID {
		t.Fatalf("runs where customer = ann and amount > 15: %v %v", runs, err)
	}
}

func (h *harness) waitSearch(runID, field string) history.Run {
	h.t.Helper()
	return h.waitRecord(runID, func(r history.Run) bool { _, ok := r.Search[field]; return ok })
}

func (h *harness) waitSearchValue(runID, field string, v any) history.Run {
	h.t.Helper()
	return h.waitRecord(runID, func(r history.Run) bool { return r.Search[field] == v })
}

func (h *harness) waitRecord(runID string, ok func(history.Run) bool) history.Run {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := h.store.Run(runID)
		if err != nil {
			h.t.Fatal(err)
		}
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("run %s: record never reached the wanted search values: %+v", runID, r)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
