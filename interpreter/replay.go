package interpreter

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wendflow/wend/history"
)

// ReplayDecoded is Replay for a caller that decoded the history's WorkflowStarted payload
// itself, from events[0], and gave New exactly that: it is not decoded again. Rebuilding an
// evicted run decoded it twice, a cost every fired timer of an evicted run paid.
func (r *Run) ReplayDecoded(events []history.Event) error {
	r.infoDecoded = true
	defer func() { r.infoDecoded = false }()
	return r.Replay(events)
}

// Replay feeds a recorded history to a fresh Run: every input is applied again and the
// decisions it yields must be exactly the recorded decisions that follow it.
func (r *Run) Replay(events []history.Event) error {
	for i := 0; i < len(events); {
		ev := events[i]
		if ev.Type.Decision() {
			return fmt.Errorf("%w: event %d (%s at %s) was recorded but no input leads to it with this spec", ErrNondeterministic, ev.Seq, ev.Type, ev.Step)
		}
		got, err := r.Apply(ev)
		if err != nil {
			return fmt.Errorf("replay event %d: %w", ev.Seq, err)
		}
		i++
		for _, g := range got {
			if i >= len(events) || !events[i].Type.Decision() {
				return fmt.Errorf("%w: after event %d the spec decides %s at %s, which the history does not have", ErrNondeterministic, ev.Seq, g.Type, g.Step)
			}
			if want := events[i]; !sameDecision(g, want) {
				return fmt.Errorf("%w: event %d is %s at %s, but the spec now decides %s at %s", ErrNondeterministic, want.Seq, want.Type, want.Step, g.Type, g.Step)
			}
			i++
		}
	}
	return nil
}

func sameDecision(a, b history.Event) bool {
	return a.Type == b.Type && a.Step == b.Step && a.ActivityExecutionID == b.ActivityExecutionID &&
		a.Attempt == b.Attempt && sameJSON(a.Data, b.Data)
}

// sameJSON compares payloads byte for byte after removing insignificant space, so a history
// that was pretty-printed (an export, a test fixture) still replays.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}
