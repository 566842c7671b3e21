package interpreter

import (
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Divergence is where a recorded history and another spec part: the first event at which
// the spec, fed the history's inputs, would not decide what the history recorded.
type Divergence struct {
	Seq      uint64            // the event where they part
	Recorded history.EventType // what the history holds at Seq ("" past its end)
	Step     string            // the step path of the recorded event, or of the decision
	Decided  history.EventType // what the spec decides there ("" when it decides nothing)
	At       string            // the step path of the spec's decision
	Reason   string            // one sentence for a person
}

// Diverge replays a recorded history on w, a spec other than the one the run started with,
// and returns where w would take another decision than the history recorded, or nil when w
// reproduces every decision so far (the run could go on under w). It is Replay with the
// mismatch kept as data, for `wend validate --against`.
func Diverge(w *spec.Workflow, evs []history.Event) (*Divergence, error) {
	if len(evs) == 0 || evs[0].Type != history.WorkflowStarted {
		return nil, fmt.Errorf("the history does not begin with WorkflowStarted")
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return nil, err
	}
	r := New(w, st)
	for i := 0; i < len(evs); {
		ev := evs[i]
		if ev.Type.Decision() {
			return &Divergence{Seq: ev.Seq, Recorded: ev.Type, Step: ev.Step,
				Reason: fmt.Sprintf("the history has %s here, which the new file does not decide", ev.Type)}, nil
		}
		got, err := r.Apply(ev)
		if err != nil {
			return &Divergence{Seq: ev.Seq, Recorded: ev.Type, Step: ev.Step,
				Reason: fmt.Sprintf("the new file cannot take the recorded %s: %v", ev.Type, err)}, nil
		}
		i++
		for _, g := range got {
			if i >= len(evs) || !evs[i].Type.Decision() {
				seq := ev.Seq + 1
				d := &Divergence{Seq: seq, Decided: g.Type, Step: g.Step, At: g.Step,
					Reason: fmt.Sprintf("after event %d the new file decides %s, which the history does not have", ev.Seq, g.Type)}
				if i < len(evs) {
					d.Recorded = evs[i].Type
					d.Reason = fmt.Sprintf("after event %d the new file decides %s, but the history has %s", ev.Seq, g.Type, evs[i].Type)
				}
				return d, nil
			}
			if want := evs[i]; !sameDecision(g, want) {
				reason := fmt.Sprintf("the history has %s, but the new file decides %s", want.Type, g.Type)
				switch {
				case want.Type == g.Type && want.Step == g.Step:
					reason = fmt.Sprintf("the history has %s with other data than the new file decides", want.Type)
				case want.Type == g.Type:
					reason = fmt.Sprintf("the history has %s at another step than the new file decides it", want.Type)
				}
				return &Divergence{Seq: want.Seq, Recorded: want.Type, Step: want.Step, Decided: g.Type, At: g.Step, Reason: reason}, nil
			}
			i++
		}
	}
	return nil, nil
}
