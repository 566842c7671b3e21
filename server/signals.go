package server

import (
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// signalWaits finds the wait_for_signal steps an open run is waiting in. The history records
// no event when such a wait begins (only its timeout timer, if any), so this replays the run
// with the spec text it recorded and offers it one signal of each name its workflow waits
// for: the SignalApplied that comes out names the waiting step. The interpreter is pure, so
// the probe touches nothing. Per name it finds the oldest waiter, which is the one the next
// signal of that name will reach.
func signalWaits(events []history.Event) (waits []Wait) {
	defer func() {
		if recover() != nil {
			waits = nil // a history this build cannot replay: show what the events say, no more
		}
	}()
	if len(events) == 0 || events[0].Type != history.WorkflowStarted {
		return nil
	}
	st, err := history.DataOf[history.Started](events[0])
	if err != nil {
		return nil
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	w.Walk(func(s *spec.Step) {
		if s.Kind == spec.KindWaitForSignal && !seen[s.Signal] {
			seen[s.Signal] = true
			names = append(names, s.Signal)
		}
	})
	last := events[len(events)-1]
	for _, name := range names {
		r := interpreter.New(w, st)
		if err := r.Replay(events); err != nil {
			return nil
		}
		probe := history.Event{Seq: last.Seq + 1, Type: history.SignalReceived, Time: last.Time,
			Data: history.MustData(history.Signal{Name: name})}
		decisions, err := r.Apply(probe)
		if err != nil {
			continue
		}
		for _, d := range decisions {
			if d.Type == history.SignalApplied {
				waits = append(waits, Wait{Kind: WaitSignal, Step: d.Step, Signal: name, Since: stepSince(events, d.Step)})
				break
			}
		}
	}
	return waits
}

// stepSince is the time of the last event of a step, the best the history says of when its
// wait began; zero when the step has none.
func stepSince(events []history.Event, step string) time.Time {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Step == step {
			return events[i].Time
		}
	}
	return time.Time{}
}
