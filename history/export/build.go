package export

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
)

// Build derives the export of one run from its record and its complete history (events in
// seq order, WorkflowStarted first). The record supplies what events do not carry (the
// workflow's name) and is trusted for status; when it is empty, status comes from the events.
//
// Build fails only on a history it cannot read: no WorkflowStarted first, a payload that is
// not JSON or not of its type, or a run id that contradicts the record. It does not judge
// integrity (history.Check does): a damaged run is exactly when an operator needs the export.
func Build(run history.Run, events []history.Event) (*Document, error) {
	if len(events) == 0 || events[0].Type != history.WorkflowStarted {
		return nil, errors.New("export: history must begin with WorkflowStarted")
	}
	b := &builder{
		doc: &Document{
			Schema: SchemaName, HistoryEvents: make([]Event, 0, len(events)),
			Activities: []Activity{}, Timers: []Timer{}, Signals: []Signal{}, Children: []Child{},
			Compensations: []Compensation{}, Failures: []Failure{},
		},
		acts: map[string]int{}, timers: map[string]int{}, signals: map[uint64]int{},
		children: map[string]int{}, comps: map[string]int{},
	}
	for _, ev := range events {
		if len(ev.Data) > 0 && !json.Valid(ev.Data) {
			return nil, fmt.Errorf("export: event %d (%s): data is not JSON", ev.Seq, ev.Type)
		}
		b.doc.HistoryEvents = append(b.doc.HistoryEvents, Event{Seq: ev.Seq, Type: string(ev.Type), Time: ev.Time,
			Step: ev.Step, ActivityExecutionID: ev.ActivityExecutionID, Attempt: ev.Attempt, Data: ev.Data})
		if err := b.event(ev); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	if err := b.workflowRecord(run); err != nil {
		return nil, err
	}
	if err := b.integrity(run); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	b.doc.computeMetrics()
	return b.doc, nil
}

// builder keeps, per kind of thing, the index of its open (or latest) entry in the document.
type builder struct {
	doc      *Document
	started  history.Started
	acts     map[string]int // activity_execution_id -> Activities index
	timers   map[string]int // timer id -> Timers index of its latest scheduling
	signals  map[uint64]int // received seq -> Signals index
	children map[string]int // step -> Children index of its latest scheduling
	comps    map[string]int // compensated step -> Compensations index of its latest start
}

func (b *builder) event(ev history.Event) error {
	switch ev.Type {
	case history.WorkflowStarted:
		return b.workflowStarted(ev)
	case history.ActivityScheduled, history.ActivityStarted, history.ActivityHeartbeatRecorded,
		history.ActivityCompleted, history.ActivityAttemptFailed, history.ActivityTimedOut,
		history.ActivityRetryScheduled, history.ActivityFailed, history.ActivityCancelled,
		history.ActivityAttemptInterrupted:
		return b.activity(ev)
	case history.TimerScheduled, history.TimerFired, history.TimerCancelled:
		return b.timer(ev)
	case history.SignalReceived, history.SignalApplied:
		return b.signal(ev)
	case history.ChildWorkflowScheduled, history.WorkflowWaitScheduled,
		history.ChildWorkflowCompleted, history.ChildWorkflowFailed,
		history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
		return b.child(ev)
	case history.CompensationStarted, history.CompensationCompleted, history.CompensationFailed:
		return b.compensation(ev)
	case history.StepFailed:
		af, err := history.DataOf[history.AttemptFailure](ev)
		if err != nil {
			return err
		}
		b.failure(ev, af.Failure)
		return nil
	case history.RetryRequested:
		return b.retryRequested(ev)
	case history.CancelRequested:
		c, err := history.DataOf[history.CancelRequest](ev)
		if err != nil {
			return err
		}
		if b.doc.Workflow.CancelReason == "" {
			b.doc.Workflow.CancelReason = c.Reason
		}
		return nil
	}
	if ev.Type.Terminal() {
		return b.closed(ev)
	}
	return nil // an event without export facts of its own (RepairRequested, newer types)
}

// failure records a failures[] row and returns it. The event's own step, execution and
// attempt fill what the payload left out: a plugin's error does not know where it ran.
func (b *builder) failure(ev history.Event, f history.Failure) *Failure {
	row := Failure{Seq: ev.Seq, EventType: string(ev.Type), Time: ev.Time, FailureCategory: f.Category,
		PropagationKind: f.PropagationKind, NonRetryable: f.NonRetryable, Type: f.Type, Message: f.Message,
		Step: f.Step, ActivityExecutionID: f.ActivityExecID, Attempt: f.Attempt, Details: f.Details}
	if row.FailureCategory == "" {
		row.FailureCategory = Unclassified
	}
	if row.Step == "" {
		row.Step = ev.Step
	}
	if row.ActivityExecutionID == "" {
		row.ActivityExecutionID = ev.ActivityExecutionID
	}
	if row.Attempt == 0 {
		row.Attempt = ev.Attempt
	}
	if row.PropagationKind == "" && ev.ActivityExecutionID != "" {
		row.PropagationKind = "activity" // what the interpreter assumes for a plugin's error
	}
	b.doc.Failures = append(b.doc.Failures, row)
	return &row
}
