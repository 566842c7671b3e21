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
	doc := &Document{
		Schema: SchemaName, Workflow: v.Workflow, HistoryEvents: make([]Event, 0, len(v.Events)),
		Activities: v.Activities, Timers: v.Timers, Signals: v.Signals, Children: v.Children,
		Compensations: v.Compensations, Failures: v.Failures, OperatorMetrics: v.Metrics,
	}
	for _, ev := range v.Events {
		doc.HistoryEvents = append(doc.HistoryEvents, Event{Seq: ev.Seq, Type: string(ev.Type), Time: ev.Time,
			Step: ev.Step, ActivityExecutionID: ev.ActivityExecutionID, Attempt: ev.Attempt, Data: ev.Data})
	}
	if err := doc.integrity(v.Run, v.RetryOf); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return doc, nil
}
