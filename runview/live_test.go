package runview_test

import (
	"encoding/json"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/runview"
)

// TestLiveStateAndPendingSignals: the detail of a live run (wend show, GET
// /v1/runs/{id}, the web UI) gives its current public state, which only a replay knows, and
// the data of signals received and not yet taken; the signal wait it is in is found too.
func TestLiveStateAndPendingSignals(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: approve
    wait_for_signal: approve
    set: {approved_by: "${{ signal.by }}", stage: review}
  - id: ship
    wait_for_signal: shipped
`, nil)
	s.Signal("approve", map[string]any{"by": "ann"})
	s.Signal("later", map[string]any{"n": 7})
	d := runview.DetailOf(s.Record(), s.Events)
	if d.StateError != "" {
		t.Fatalf("state error: %s", d.StateError)
	}
	var state map[string]any
	if err := json.Unmarshal(d.State, &state); err != nil || state["approved_by"] != "ann" || state["stage"] != "review" {
		t.Errorf("state %s (%v)", d.State, err)
	}
	if len(d.Signals) != 1 || d.Signals[0].Name != "later" || string(d.Signals[0].Data) != `{"n":7}` {
		t.Errorf("pending signals %+v", d.Signals)
	}
	if len(d.Waits) != 1 || d.Waits[0].Kind != runview.WaitSignal || d.Waits[0].Signal != "shipped" || d.Waits[0].Step != "steps[1]" {
		t.Errorf("waits %+v", d.Waits)
	}
	js, _ := json.Marshal(d)
	var shape map[string]json.RawMessage
	if err := json.Unmarshal(js, &shape); err != nil || string(shape["state"]) != `{"approved_by":"ann","stage":"review"}` {
		t.Errorf("JSON state %s", shape["state"])
	}
}

// TestStateOfAnUnreplayableRun: a history the spec no longer produces keeps its detail and
// says why it has no state.
func TestStateOfAnUnreplayableRun(t *testing.T) {
	s := sim.New(t, sim.Head+"steps:\n  - {id: a, activity: p.echo}\n", nil)
	evs := append([]history.Event(nil), s.Events...)
	evs[1].Step = "steps[9]" // the recorded decision is not what the spec decides
	d := runview.DetailOf(s.Record(), evs)
	if d.State != nil || d.StateError == "" || len(d.Events) != len(evs) {
		t.Errorf("state %s, error %q, %d events", d.State, d.StateError, len(d.Events))
	}
}

// A run waiting for two signals at once has both waits found, in spec order, and its state is
// the replay's before any probe (the last probe takes the run whose state was read).
func TestLiveFindsEverySignalWait(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - {steps: [], set: {stage: waiting}}
  - parallel:
      - {id: a, wait_for_signal: approve, set: {stage: approved}}
      - {id: b, wait_for_signal: shipped, set: {stage: shipped}}
`, nil)
	v, err := runview.Fold(s.Record(), s.Events)
	if err != nil {
		t.Fatal(err)
	}
	l := v.Live()
	if l.Err != "" || string(l.State) != `{"stage":"waiting"}` {
		t.Fatalf("state %s (%s), want the replay's before a probe", l.State, l.Err)
	}
	if len(l.SignalWaits) != 2 || l.SignalWaits[0].Signal != "approve" || l.SignalWaits[0].Step != "steps[1].parallel[0]" ||
		l.SignalWaits[1].Signal != "shipped" || l.SignalWaits[1].Step != "steps[1].parallel[1]" {
		t.Fatalf("signal waits %+v", l.SignalWaits)
	}
}
