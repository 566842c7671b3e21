package runview

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// View is one run as people read it, folded from its record and history in one pass: the
// workflow's header, every activity with its attempts, timers, signals, children,
// compensations, every failure, the operator metrics, and per step what its events say. The
// step tree, the waits, the state and the names need the spec the run recorded or a replay;
// they are worked out when first asked for (Steps, Waits, Live, Name) and kept, so a View is
// not safe for concurrent use: fold one per reader.
type View struct {
	Run    history.Run     // the record Fold was given
	Events []history.Event // the history Fold read, unchanged

	Workflow      Workflow
	Activities    []Activity
	Timers        []Timer
	Signals       []Signal
	Children      []Child
	Compensations []Compensation
	Failures      []Failure
	Metrics       Metrics
	// RetryOf is the failed run this run retries (wend retry).
	RetryOf string

	started  history.Started
	acts     map[string]int // activity_execution_id -> Activities index
	timers   map[string]int // timer id -> Timers index of its latest scheduling
	signals  map[uint64]int // received seq -> Signals index
	children map[string]int // step -> Children index of its latest scheduling
	comps    map[string]int // compensated step -> Compensations index of its latest start
	steps    stepEvents
	// rawFailures are the failures as their events recorded them, index for index with
	// Failures (whose rows fill in what a payload left out).
	rawFailures []history.Failure
	output      json.RawMessage // the terminal event's, as recorded

	// sharedAttempts: the tries of Activities[:sharedAttempts] are the view's this one was
	// extended from (Extend), until ownAttempts copies them.
	sharedAttempts int
	ownedAttempts  map[int]bool

	spec       *spec.Workflow
	specLoaded bool
	specs      *Specs // loads the spec text, nil: loaded afresh
	ids        map[string]string
	live       *Live
}

// Fold reads a run's record and its complete history (events in seq order, WorkflowStarted
// first). The record supplies what events do not carry (the workflow's name) and is trusted
// for status; when it is empty, status comes from the events.
//
// Fold fails only on a history it cannot read: no WorkflowStarted first, a payload that is
// not JSON or not of its type, or a run id that contradicts the record. It does not judge
// integrity (history.Check does): a damaged run is exactly when an operator needs to read it.
func Fold(run history.Run, events []history.Event) (*View, error) {
	if len(events) == 0 || events[0].Type != history.WorkflowStarted {
		return nil, errors.New("history must begin with WorkflowStarted")
	}
	// The activities are most of a long history: sized once, not grown a copy at a time.
	nacts := 0
	for _, ev := range events {
		if ev.Type == history.ActivityScheduled {
			nacts++
		}
	}
	v := &View{
		Run: run, Events: events,
		Activities: make([]Activity, 0, nacts), Timers: []Timer{}, Signals: []Signal{}, Children: []Child{},
		Compensations: []Compensation{}, Failures: []Failure{},
		acts: make(map[string]int, nacts), timers: map[string]int{}, signals: map[uint64]int{},
		children: map[string]int{}, comps: map[string]int{}, steps: stepEvents{},
	}
	if err := v.fold(events); err != nil {
		return nil, err
	}
	if err := v.finish(run); err != nil {
		return nil, err
	}
	return v, nil
}

// fold applies events in order.
func (v *View) fold(events []history.Event) error {
	for _, ev := range events {
		if len(ev.Data) > 0 && !json.Valid(ev.Data) {
			return fmt.Errorf("event %d (%s): data is not JSON", ev.Seq, ev.Type)
		}
		n := len(v.Failures)
		if err := v.event(ev); err != nil {
			return err
		}
		failure := ""
		if len(v.Failures) > n {
			failure = v.Failures[n].Message
		}
		v.steps.fold(v.atStep(ev), failure)
	}
	return nil
}

// finish works out what needs the whole history and the record: the record's fields, the
// caught failures, the metrics.
func (v *View) finish(run history.Run) error {
	if err := v.workflowRecord(run); err != nil {
		return err
	}
	v.markCaught()
	v.Metrics = Metrics{}
	v.computeMetrics()
	return nil
}

func (v *View) event(ev history.Event) error {
	switch ev.Type {
	case history.WorkflowStarted:
		return v.workflowStarted(ev)
	case history.ActivityScheduled, history.ActivityStarted, history.ActivityHeartbeatRecorded,
		history.ActivityCompleted, history.ActivityAttemptFailed, history.ActivityTimedOut,
		history.ActivityRetryScheduled, history.ActivityFailed, history.ActivityCancelled,
		history.ActivityAttemptInterrupted:
		return v.activity(ev)
	case history.TimerScheduled, history.TimerFired, history.TimerCancelled:
		return v.timer(ev)
	case history.SignalReceived, history.SignalApplied:
		return v.signal(ev)
	case history.ChildWorkflowScheduled, history.WorkflowWaitScheduled,
		history.ChildWorkflowCompleted, history.ChildWorkflowFailed,
		history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
		return v.child(ev)
	case history.CompensationStarted, history.CompensationCompleted, history.CompensationFailed:
		return v.compensation(ev)
	case history.StepFailed:
		af, err := history.DataOf[history.AttemptFailure](ev)
		if err != nil {
			return err
		}
		v.failure(ev, af.Failure)
		return nil
	case history.RetryRequested:
		return v.retryRequested(ev)
	case history.WorkflowMigrated:
		m, err := history.DataOf[history.Migration](ev)
		if err != nil {
			return err
		}
		// The run goes on under the new text: its hash, and the spec its steps are named by.
		v.Workflow.SpecSHA256, v.started.SpecSource = m.ToSHA256, m.SpecSource
		v.spec, v.specLoaded, v.ids = nil, false, nil
		return nil
	case history.CancelRequested:
		c, err := history.DataOf[history.CancelRequest](ev)
		if err != nil {
			return err
		}
		if v.Workflow.CancelReason == "" {
			v.Workflow.CancelReason = c.Reason
		}
		return nil
	}
	if ev.Type.Terminal() {
		return v.closed(ev)
	}
	return nil // an event without facts of its own (RepairRequested, newer types)
}

// atStep is ev with the step it concerns. A TimerFired recorded before the engine named the
// timer's step (and a workflow deadline's TimerCancelled) carries none: the timer's
// TimerScheduled says where it was set.
func (v *View) atStep(ev history.Event) history.Event {
	if ev.Step != "" || (ev.Type != history.TimerFired && ev.Type != history.TimerCancelled) {
		return ev
	}
	if ref, err := history.DataOf[history.TimerRef](ev); err == nil {
		if i, ok := v.timers[ref.TimerID]; ok {
			ev.Step = v.Timers[i].Step
		}
	}
	return ev
}

// failure records a Failures row and returns it. The event's own step, execution and
// attempt fill what the payload left out: a plugin's error does not know where it ran.
func (v *View) failure(ev history.Event, f history.Failure) *Failure {
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
	v.Failures = append(v.Failures, row)
	v.rawFailures = append(v.rawFailures, f)
	return &row
}
