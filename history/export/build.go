package export

import (
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// Build derives the export of one run from its record and its complete history (events in
// seq order, WorkflowStarted first): the run's view (runview.Fold) with its events as stored,
// the integrity of those events and the links to related runs. The record supplies what
// events do not carry (the workflow's name) and is trusted for status.
//
// Build fails only on a history it cannot read (runview.Fold says which). It does not judge
// integrity (history.Check does): a damaged run is exactly when an operator needs the export.
func Build(run history.Run, events []history.Event) (*Document, error) {
	v, err := runview.Fold(run, events)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return FromView(v)
}

// FromView is the export of a run's view.
func FromView(v *runview.View) (*Document, error) {
	doc := Sections(v)
	doc.HistoryEvents = EventsOf(v.Events)
	if err := doc.integrity(v.Run, v.RetryOf); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return doc, nil
}

// Sections is the export of a run's view without its history events and their integrity:
// what a page shows beside a page of the events (EventsOf), with no pass over every event.
func Sections(v *runview.View) *Document {
	return &Document{
		Schema: SchemaName, Workflow: v.Workflow, HistoryEvents: []Event{},
		Activities: v.Activities, Timers: v.Timers, Signals: v.Signals, Children: v.Children,
		Compensations: v.Compensations, Failures: v.Failures, OperatorMetrics: v.Metrics,
	}
}

// EventsOf are events as the export lists them.
func EventsOf(evs []history.Event) []Event {
	out := make([]Event, 0, len(evs))
	for _, ev := range evs {
		out = append(out, Event{Seq: ev.Seq, Type: string(ev.Type), Time: ev.Time,
			Step: ev.Step, ActivityExecutionID: ev.ActivityExecutionID, Attempt: ev.Attempt, Data: ev.Data})
	}
	return out
}
