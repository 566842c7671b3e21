package runview

import (
	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

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

// Detail is the run's view as the API carries it (api.RunDetail): DetailOf builds it.
type Detail = api.RunDetail

// FailureAt is a failure recorded in the history with the event that recorded it
// (api.FailureAt).
type FailureAt = api.FailureAt
