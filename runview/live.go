package runview

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Live is what only a replay of the run can say: the history records no event when a
// wait_for_signal begins, and `set` steps change the state without one.
type Live struct {
	// State is the run's public state after its last event, a JSON object (keys starting
	// with _ are the engine's and left out); nil when the history cannot be replayed.
	State json.RawMessage
	// SignalWaits are the wait_for_signal steps an open run waits in, one per signal name:
	// the oldest waiter, which the next signal of that name reaches.
	SignalWaits []Wait
	// Err says why the run could not be replayed (a spec this build no longer reads, a
	// history it does not produce): the rest of the view still stands.
	Err string
}

// Live replays the run with the spec text it recorded (once; later calls reuse it). The
// interpreter is pure, so this touches nothing. To find the signal waits it offers the
// replayed run one signal of each name its workflow waits for: the SignalApplied that comes
// out names the waiting step.
func (v *View) Live() *Live {
	if v.live == nil {
		v.live = v.replay()
	}
	return v.live
}

func (v *View) replay() (l *Live) {
	l = &Live{}
	defer func() {
		if p := recover(); p != nil {
			l = &Live{Err: fmt.Sprintf("replay panicked: %v", p)}
		}
	}()
	w := v.Spec()
	if w == nil {
		return &Live{Err: "the spec text the run recorded does not load"}
	}
	fresh := func() (*interpreter.Run, error) {
		r := interpreter.New(w, v.started)
		return r, r.Replay(v.Events)
	}
	r, err := fresh()
	if err != nil {
		return &Live{Err: err.Error()}
	}
	if l.State, err = publicState(r.State()); err != nil {
		return &Live{Err: err.Error()}
	}
	if !v.Open() || r.Closed() != "" {
		return l
	}
	last := v.Events[len(v.Events)-1]
	names := signalNames(w)
	for i, name := range names {
		// Each probe needs the run as replayed; the one replayed above, whose state is read
		// already, takes the last probe, so a workflow with one signal name replays once.
		r := r
		if i < len(names)-1 {
			if r, err = fresh(); err != nil {
				break
			}
		}
		probe := history.Event{Seq: last.Seq + 1, Type: history.SignalReceived, Time: last.Time,
			Data: history.MustData(history.Signal{Name: name})}
		decisions, err := r.Apply(probe)
		if err != nil {
			continue
		}
		for _, d := range decisions {
			if d.Type == history.SignalApplied {
				l.SignalWaits = append(l.SignalWaits, Wait{Kind: WaitSignal, Step: d.Step, Signal: name, Since: v.stepSince(d.Step)})
				break
			}
		}
	}
	return l
}

// signalNames are the signal names the workflow's wait_for_signal steps wait for, in spec order.
func signalNames(w *spec.Workflow) []string {
	var names []string
	seen := map[string]bool{}
	w.Walk(func(s *spec.Step) {
		if s.Kind == spec.KindWaitForSignal && !seen[s.Signal] {
			seen[s.Signal] = true
			names = append(names, s.Signal)
		}
	})
	return names
}

// stepSince is the time of the last event of a step, the best the history says of when its
// wait began; zero when the step has none.
func (v *View) stepSince(step string) time.Time {
	for i := len(v.Events) - 1; i >= 0; i-- {
		if v.Events[i].Step == step {
			return v.Events[i].Time
		}
	}
	return time.Time{}
}

// publicState is the state without the engine's reserved keys, as the JSON object the run's
// expressions would see.
func publicState(st map[string]any) (json.RawMessage, error) {
	out := make(map[string]any, len(st))
	for k, x := range st {
		if !strings.HasPrefix(k, "_") {
			out[k] = x
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("the run's state is not JSON: %w", err)
	}
	return b, nil
}
