package engine

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// A retry of a keyed workflow takes a slot of its key like a start: it runs at once when the
// key has a free slot, and waits queued (durably, across a restart) while another run holds
// it, then resumes from the failed step.
func TestRunQueueRetry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		busy    bool // another run of the key holds the one slot when the retry comes
		restart bool // the engine stops and another resumes while the retry is queued
	}{
		{"free slot", false, false},
		{"busy slot", true, false},
		{"busy slot across a restart", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			hs := newHolds(h)
			var mu sync.Mutex
			flaky := map[string]int{} // calls by workflow id; the first of r1 fails
			h.acts.fns["flaky"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
				mu.Lock()
				defer mu.Unlock()
				flaky[c.WorkflowID]++
				if c.WorkflowID == "r1" && flaky[c.WorkflowID] == 1 {
					return nil, &history.ActivityError{Message: "down", NonRetryable: true}
				}
				return json.RawMessage(`1`), nil
			}
			f := h.write("keyed.wend.yaml", "wend: v1\nname: keyed\nplugins: {p: ./p}\n"+
				"concurrency: {key: \"${{ input.c }}\", limit: 1}\n"+
				"steps: [{id: f, activity: p.flaky}, {id: h, activity: p.hold, with: \"${{ input.c }}\"}]\n")
			h.start(f, "r1", `{"c": "ann"}`)
			if r := waitStill(t, h, "r1"); r.Status != history.StatusFailed {
				t.Fatalf("r1: %s, want failed", r.Status)
			}
			if tc.busy {
				h.start(f, "r2", `{"c": "ann"}`)
				waitFor(t, "r2 called", func() bool { return slices.Contains(hs.begun("ann"), "r2") })
			}
			h.clock.Advance(time.Second) // the retry run starts after the failed one: runs of an id sort by start
			r, err := h.e.Retry(context.Background(), "r1")
			if err != nil {
				t.Fatal(err)
			}
			want := history.StatusRunning
			if tc.busy {
				want = history.StatusQueued
			}
			if r.Status != want {
				t.Fatalf("retry of r1: %s, want %s", r.Status, want)
			}
			if tc.busy {
				if qi, ok := h.e.Queued("r1"); !ok || qi.Key != "ann" || qi.Running != 1 || qi.Position != 1 {
					t.Fatalf("queued retry: %+v %v", qi, ok)
				}
				if tc.restart {
					h.e.Close()
					h.open()
					if _, err := h.e.Recover(context.Background()); err != nil {
						t.Fatal(err)
					}
					if qi, ok := h.e.Queued("r1"); !ok || qi.Running != 1 {
						t.Fatalf("queued retry after restart: %+v %v", qi, ok)
					}
				}
				if got := hs.begun("ann"); slices.Contains(got, "r1") {
					t.Fatalf("calls %v: the queued retry ran while r2 held the slot", got)
				}
				waitFor(t, "r2 called", func() bool { return slices.Contains(hs.begun("ann"), "r2") })
				hs.release("r2")
				if r := waitStill(t, h, "r2"); r.Status != history.StatusCompleted {
					t.Fatalf("r2: %s", r.Status)
				}
			}
			waitFor(t, "r1's retry called", func() bool { return slices.Contains(hs.begun("ann"), "r1") })
			hs.release("r1")
			done := waitStill(t, h, "r1")
			if done.RunID != r.RunID || done.Status != history.StatusCompleted {
				t.Fatalf("r1's retry %s: %s, want %s completed", done.RunID, done.Status, r.RunID)
			}
			evs, err := h.store.Events(done.RunID, 0)
			if err != nil || len(history.Check(done, evs)) != 0 {
				t.Fatalf("retry's history: %v %v", err, history.Check(done, evs))
			}
			mu.Lock()
			defer mu.Unlock()
			if flaky["r1"] != 2 {
				t.Fatalf("flaky called %d times for r1, want 2 (the failed try, then the retry's)", flaky["r1"])
			}
			hs.mu.Lock()
			defer hs.mu.Unlock()
			if hs.most["ann"] != 1 {
				t.Fatalf("%d runs of the key at once, over the limit 1", hs.most["ann"])
			}
			if n := h.e.QueuedRuns(); n != 0 {
				t.Fatalf("%d still queued", n)
			}
		})
	}
}
