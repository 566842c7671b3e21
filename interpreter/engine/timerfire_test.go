package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestTimerPoolFiresEveryTimerOnce: with many timers due in the same
// second, fired timers go to their runs through a bounded pool of workers that take firings
// until none is queued (timerfire.go), not a goroutine each. Many timers due at once, on runs
// that left memory, each fire exactly once and their runs complete; the pool never holds more
// workers than its bound, and is empty afterwards.
func TestTimerPoolFiresEveryTimerOnce(t *testing.T) {
	const runs, bound = 60, 4
	h := newIdleHarness(t, Options{MaxResidentRuns: 5})
	h.e.timerMu.Lock()
	h.e.timerMax = bound
	h.e.timerMu.Unlock()
	f := h.write("w.wend.yaml", head+"steps:\n  - {id: w, delay: 1h}\n  - {id: a, activity: p.after}\noutput: \"${{ steps.a.output }}\"\n")
	for i := range runs {
		h.start(f, fmt.Sprint("r", i), "null")
	}
	h.clock.Advance(time.Second) // the sweep: all but 5 leave memory
	if s := h.e.Idle(); s.Resident > 5 || s.Open != runs {
		t.Fatalf("before the timers: %+v, want at most 5 of %d resident", s, runs)
	}
	h.clock.Advance(time.Hour) // every timer falls due at once
	for i := range runs {
		id := fmt.Sprint("r", i)
		r := h.wait(id)
		if r.Status != history.StatusCompleted {
			t.Fatalf("%s: %s", id, r.Status)
		}
		evs, err := h.store.Events(r.RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		fired := 0
		for _, ev := range evs {
			if ev.Type == history.TimerFired {
				fired++
			}
		}
		if fired != 1 {
			t.Fatalf("%s recorded TimerFired %d times, want once", id, fired)
		}
	}
	if got := h.acts.count("after"); got != runs {
		t.Fatalf("after called %d times, want %d", got, runs)
	}
	h.e.timerMu.Lock()
	workers, peak := h.e.timerWorkers, h.e.timerPeak
	h.e.timerMu.Unlock()
	if peak < 1 || peak > bound {
		t.Fatalf("the pool held up to %d workers, want 1..%d", peak, bound)
	}
	// A worker leaves once it finds the queue empty, after its last delivery's commit.
	deadline := time.Now().Add(10 * time.Second)
	for workers != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		h.e.timerMu.Lock()
		workers = h.e.timerWorkers
		h.e.timerMu.Unlock()
	}
	if workers != 0 || len(h.e.timerq) != 0 {
		t.Fatalf("after the firing: %d workers, %d firings queued; want none", workers, len(h.e.timerq))
	}
}

// TestTimerPoolDropsFiringsWhenClosing: once the engine is closing, queued firings are dropped,
// not delivered (each would rebuild its run by replay for a commit that cannot be made); the
// timer's task stays in the store for the next start to arm.
func TestTimerPoolDropsFiringsWhenClosing(t *testing.T) {
	h := newIdleHarness(t, Options{})
	f := h.write("w.wend.yaml", head+"steps:\n  - {id: w, delay: 1h}\n  - {id: a, activity: p.after}\n")
	r := h.start(f, "r", "null")
	h.settle("r", history.TimerScheduled)
	lr := h.e.live(r.RunID)
	h.e.cancel() // what Close and a failed commit do first
	ev := history.Event{Type: history.TimerFired, Step: "w", Data: history.MustData(history.TimerRef{TimerID: "w"})}
	for range 20 {
		h.e.fire(timerFiring{lr: lr, taskID: "t", ev: ev})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.e.timerMu.Lock()
		workers, queued := h.e.timerWorkers, len(h.e.timerq)
		h.e.timerMu.Unlock()
		if workers == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers, %d firings queued after closing", workers, queued)
		}
		time.Sleep(time.Millisecond)
	}
	if h.hasEvent(r.RunID, history.TimerFired) {
		t.Fatal("a firing queued while closing was delivered")
	}
}
