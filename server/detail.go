package server

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/wendflow/wend/history"
)

// RunDetail is one run as `wend show` and the UI present it: the record, what it is waiting
// for now, every failure, the output, and the full history.
type RunDetail struct {
	Run     history.Run      `json:"run"`
	Input   json.RawMessage  `json:"input,omitempty"`
	Output  json.RawMessage  `json:"output,omitempty"`  // completed runs
	Failure *history.Failure `json:"failure,omitempty"` // how a failed, cancelled or timed-out run ended
	// Waits are what the open run waits for: activities in flight or backing off, timers,
	// signal waits, children and awaited workflows. Empty once the run has closed.
	Waits []Wait `json:"waits"`
	// Signals are received and not yet taken by a wait_for_signal step (kept for a later wait).
	Signals  []history.Signal `json:"pending_signals"`
	Failures []FailureAt      `json:"failures"`
	Events   []history.Event  `json:"events"`
}

// Wait kinds.
const (
	WaitActivity = "activity"
	WaitTimer    = "timer"
	WaitSignal   = "signal"
	WaitChild    = "child_workflow"
	WaitWorkflow = "workflow"
)

// Wait is one thing an open run waits for.
type Wait struct {
	Kind  string    `json:"kind"`
	Step  string    `json:"step,omitempty"`
	Since time.Time `json:"since,omitzero"` // when the wait began, when the history says
	// activity
	Activity            string `json:"activity,omitempty"` // plugin.activity
	ActivityExecutionID string `json:"activity_execution_id,omitempty"`
	Attempt             int    `json:"attempt,omitempty"`
	// Until is when a timer fires or a retry becomes due.
	Until   time.Time `json:"until,omitzero"`
	Purpose string    `json:"purpose,omitempty"` // timer: delay or timeout
	Signal  string    `json:"signal,omitempty"`
	// WorkflowID is the child's or the awaited workflow's id.
	WorkflowID string `json:"workflow_id,omitempty"`
	seq        uint64
}

// FailureAt is a failure recorded in the history, with the event that recorded it.
type FailureAt struct {
	Seq     uint64            `json:"seq"`
	Type    history.EventType `json:"type"`
	Time    time.Time         `json:"time"`
	Failure history.Failure   `json:"failure"`
}

// Detail derives a RunDetail from a run's record and complete history.
func Detail(r history.Run, events []history.Event) RunDetail {
	d := RunDetail{Run: r, Events: events, Waits: []Wait{}, Signals: []history.Signal{}, Failures: []FailureAt{}}
	if d.Events == nil {
		d.Events = []history.Event{}
	}
	for _, ev := range events {
		switch {
		case ev.Type == history.WorkflowStarted:
			st, _ := history.DataOf[history.Started](ev)
			d.Input = st.Input
		case ev.Type.Terminal():
			c, _ := history.DataOf[history.Closed](ev)
			d.Output, d.Failure = c.Output, c.Failure
		}
		if f, ok := FailureOf(ev); ok {
			d.Failures = append(d.Failures, FailureAt{Seq: ev.Seq, Type: ev.Type, Time: ev.Time, Failure: f})
		}
	}
	if !r.Open() {
		return d
	}
	d.Waits = Pending(events)
	d.Waits = append(d.Waits, signalWaits(events)...)
	d.Signals = received(events)
	return d
}

// FailureOf reads the failure an event records, whichever payload carries it.
func FailureOf(ev history.Event) (history.Failure, bool) {
	switch ev.Type {
	case history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityFailed, history.StepFailed,
		history.CompensationFailed:
		if af, err := history.DataOf[history.AttemptFailure](ev); err == nil && af.Failure.Message+af.Failure.Category != "" {
			return af.Failure, true
		}
		fallthrough
	case history.WorkflowFailed, history.WorkflowTimedOut, history.WorkflowCancelled, history.WorkflowTerminated,
		history.ChildWorkflowFailed, history.WorkflowWaitFailed:
		if c, err := history.DataOf[history.Closed](ev); err == nil && c.Failure != nil {
			return *c.Failure, true
		}
	}
	return history.Failure{}, false
}

// Pending lists what an open run waits for according to its history alone: activities
// scheduled and not finished, timers not fired or cancelled, children and awaited workflows
// not reported back. Signal waits leave no event of their own; Detail adds them.
func Pending(events []history.Event) []Wait {
	acts := map[string]Wait{}
	timers := map[string]Wait{}
	steps := map[string]Wait{} // children and workflow waits, by step
	for _, ev := range events {
		switch ev.Type {
		case history.ActivityScheduled:
			a, _ := history.DataOf[history.ActivitySchedule](ev)
			acts[ev.ActivityExecutionID] = Wait{Kind: WaitActivity, Step: ev.Step, Since: ev.Time, seq: ev.Seq,
				Activity: a.Plugin + "." + a.Activity, ActivityExecutionID: ev.ActivityExecutionID, Attempt: max(ev.Attempt, 1)}
		case history.ActivityRetryScheduled:
			if w, ok := acts[ev.ActivityExecutionID]; ok {
				rs, _ := history.DataOf[history.RetrySchedule](ev)
				w.Attempt, w.Until = rs.NextAttempt, rs.AvailableAt
				acts[ev.ActivityExecutionID] = w
			}
		case history.ActivityCompleted, history.ActivityFailed, history.ActivityCancelled:
			delete(acts, ev.ActivityExecutionID)
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](ev)
			timers[ts.TimerID] = Wait{Kind: WaitTimer, Step: ev.Step, Since: ev.Time, seq: ev.Seq, Until: ts.FireAt, Purpose: ts.Purpose}
		case history.TimerFired, history.TimerCancelled:
			ref, _ := history.DataOf[history.TimerRef](ev)
			delete(timers, ref.TimerID)
		case history.ChildWorkflowScheduled:
			cs, _ := history.DataOf[history.ChildSchedule](ev)
			steps[ev.Step] = Wait{Kind: WaitChild, Step: ev.Step, Since: ev.Time, seq: ev.Seq, WorkflowID: cs.WorkflowID}
		case history.WorkflowWaitScheduled:
			ws, _ := history.DataOf[history.WaitSchedule](ev)
			steps[ev.Step] = Wait{Kind: WaitWorkflow, Step: ev.Step, Since: ev.Time, seq: ev.Seq, WorkflowID: ws.WorkflowID}
		case history.ChildWorkflowCompleted, history.ChildWorkflowFailed, history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
			delete(steps, ev.Step)
		}
	}
	out := make([]Wait, 0, len(acts)+len(timers)+len(steps))
	for _, m := range []map[string]Wait{acts, timers, steps} {
		for _, w := range m {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b Wait) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// received lists signals received and not yet applied, oldest first.
func received(events []history.Event) []history.Signal {
	var out []history.Signal
	for _, ev := range events {
		switch ev.Type {
		case history.SignalReceived:
			s, _ := history.DataOf[history.Signal](ev)
			s.ReceivedSeq = ev.Seq
			out = append(out, s)
		case history.SignalApplied:
			s, _ := history.DataOf[history.Signal](ev)
			out = slices.DeleteFunc(out, func(x history.Signal) bool { return x.ReceivedSeq == s.ReceivedSeq })
		}
	}
	if out == nil {
		out = []history.Signal{}
	}
	return out
}
