package runview

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
)

// Detail is one run as `wend show --json` and GET /v1/runs/{id} give it: the record, the
// input and how it ended, its current public state, what it is waiting for now, the signals
// no step has taken, every failure, and the full history.
type Detail struct {
	Run     history.Run      `json:"run"`
	Input   json.RawMessage  `json:"input,omitempty"`
	Output  json.RawMessage  `json:"output,omitempty"`  // completed runs
	Failure *history.Failure `json:"failure,omitempty"` // how a failed, cancelled or timed-out run ended
	// State is the run's public state after its last event (Live.State); absent when the
	// history cannot be replayed, and StateError says why.
	State      json.RawMessage `json:"state,omitempty"`
	StateError string          `json:"state_error,omitempty"`
	// Waits are what the open run waits for: activities in flight or backing off, timers,
	// signal waits, children and awaited workflows. Empty once the run has closed.
	Waits []Wait `json:"waits"`
	// Signals are received and not yet taken by a wait_for_signal step (kept for a later
	// wait), with their data.
	Signals  []history.Signal `json:"pending_signals"`
	Failures []FailureAt      `json:"failures"`
	Events   []history.Event  `json:"events"`
	// Queue says what a queued run waits for; absent for any other run.
	Queue *Queue `json:"queue,omitempty"`
}

// FailureAt is a failure recorded in the history, as recorded, with the event that recorded it.
type FailureAt struct {
	Seq     uint64            `json:"seq"`
	Type    history.EventType `json:"type"`
	Time    time.Time         `json:"time"`
	Failure history.Failure   `json:"failure"`
	// Caught: a catch handled the failure and the run went on (Failure.Caught).
	Caught bool `json:"caught,omitempty"`
}

// DetailOf is the Detail of a run's record and complete history. A history Fold cannot read
// still gets its record and events (and says why in StateError), never an error: that is
// when an operator most needs to look at it.
func DetailOf(r history.Run, events []history.Event) Detail {
	d := Detail{Run: r, Events: events, Waits: []Wait{}, Signals: []history.Signal{}, Failures: []FailureAt{}}
	if d.Events == nil {
		d.Events = []history.Event{}
	}
	v, err := Fold(r, events)
	if err != nil {
		d.StateError = err.Error()
		return d
	}
	return v.Detail()
}

// Detail is the view as a Detail.
func (v *View) Detail() Detail {
	d := Detail{Run: v.Run, Events: v.Events, Input: v.started.Input, Output: v.output,
		Waits: v.Waits(), Signals: []history.Signal{}, Failures: make([]FailureAt, len(v.Failures))}
	if f := v.Workflow.Failure; f != nil {
		raw := v.rawFailure(*f)
		d.Failure = &raw
	}
	for i, f := range v.Failures {
		d.Failures[i] = FailureAt{Seq: f.Seq, Type: history.EventType(f.EventType), Time: f.Time, Failure: v.rawFailures[i], Caught: f.Caught}
		// A plugin's error is recorded without a propagation kind; say "activity", as the
		// export does, rather than "".
		d.Failures[i].Failure.PropagationKind = f.PropagationKind
	}
	for _, s := range v.PendingSignals() {
		d.Signals = append(d.Signals, history.Signal{Name: s.Name, Data: s.Data, SignalID: s.SignalID, ReceivedSeq: s.ReceivedSeq})
	}
	live := v.Live()
	d.State, d.StateError = live.State, live.Err
	return d
}

// rawFailure is the failure row f as its event recorded it, with the propagation kind the
// row gives one recorded without it.
func (v *View) rawFailure(f Failure) history.Failure {
	for i := range v.Failures {
		if v.Failures[i].Seq == f.Seq {
			raw := v.rawFailures[i]
			raw.PropagationKind = v.Failures[i].PropagationKind
			return raw
		}
	}
	return history.Failure{Category: f.FailureCategory, PropagationKind: f.PropagationKind, Type: f.Type, Message: f.Message, NonRetryable: f.NonRetryable}
}
