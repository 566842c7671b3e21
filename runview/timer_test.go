package runview_test

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/runview"
)

// withTimerSteps is the history as the engine records it now: each TimerFired names the step
// its TimerScheduled was at. A sim.Sim fires timers as older engines did, without the step.
func withTimerSteps(evs []history.Event) []history.Event {
	out := append([]history.Event(nil), evs...)
	at := map[string]string{}
	for i, ev := range out {
		ref, _ := history.DataOf[history.TimerRef](ev)
		switch ev.Type {
		case history.TimerScheduled:
			at[ref.TimerID] = ev.Step
		case history.TimerFired:
			out[i].Step = at[ref.TimerID]
		}
	}
	return out
}

// TestFiredDelayNotWaiting: a fired delay and the parallel around it stayed "waiting"
// on completed and cancelled runs, as TimerFired carried no step. With the step (new
// histories) and without it (older ones, by the timer's TimerScheduled) both read completed.
func TestFiredDelayNotWaiting(t *testing.T) {
	const src = sim.Head + `
steps:
  - id: both
    parallel:
      - {id: pause, delay: 1m}
      - {id: go, activity: p.echo}
  - id: hold
    wait_for_signal: never
`
	completed := sim.New(t, src, nil)
	completed.FireTimers(sim.T0.Add(time.Hour))
	completed.RunActivities(sim.Echo)
	cancelled := sim.New(t, src, nil)
	cancelled.FireTimers(sim.T0.Add(time.Hour))
	cancelled.RunActivities(sim.Echo)
	cancelled.Cancel("ops")
	for name, s := range map[string]*sim.Sim{"open": completed, "cancelled": cancelled} {
		for shape, evs := range map[string][]history.Event{"without step": s.Events, "with step": withTimerSteps(s.Events)} {
			v, err := runview.Fold(s.Record(), evs)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range v.Steps() {
				got[r.Name] = r.Status
			}
			if got["pause"] != runview.StepCompleted || got["both"] != runview.StepCompleted {
				t.Errorf("%s run, TimerFired %s: pause %s, both %s; want completed", name, shape, got["pause"], got["both"])
			}
		}
	}
}
