package engine

import (
	"testing"

	"github.com/wendflow/wend/history"
)

// TestTimerFiredNamesItsStep: a fired delay stayed "waiting" in the web UI because the
// engine recorded TimerFired without the step it ends; it now names the step the timer was
// scheduled at (the for_each instance's path inside a loop), as the Temporal driver does.
func TestTimerFiredNamesItsStep(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps:\n  - parallel: [{delay: 1m}, {for_each: [1, 2], steps: [{delay: 2s}]}]\n")
	r := h.start(f, "d", "null")
	if r = h.wait("d"); r.Status != history.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	evs, err := h.store.Events(r.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	scheduledAt := map[string]string{}
	fired := 0
	for _, ev := range evs {
		switch ev.Type {
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](ev)
			scheduledAt[ts.TimerID] = ev.Step
		case history.TimerFired:
			ref, _ := history.DataOf[history.TimerRef](ev)
			if want := scheduledAt[ref.TimerID]; ev.Step == "" || ev.Step != want {
				t.Errorf("TimerFired of %s at step %q, want %q", ref.TimerID, ev.Step, want)
			}
			fired++
		}
	}
	if fired != 3 {
		t.Fatalf("%d timers fired, want 3", fired)
	}
}
