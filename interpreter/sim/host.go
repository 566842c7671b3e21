package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Host plays the engine's part for one run, in memory and in virtual time. Its user may read
// its fields between calls and move Now forward.
type Host struct {
	W       *spec.Workflow
	R       *interpreter.Run
	Started history.Started
	Events  []history.Event
	Start   time.Time // when the run started, in virtual time
	Now     time.Time // the virtual clock: each input is recorded at it

	// Recorded, when set, is told each event the host records, after the host has done its
	// own part for it: the input once the interpreter took it, then each decision in order.
	Recorded func(history.Event)

	agenda agenda
	sched  map[string]history.ActivitySchedule // activity execution id -> its ActivityScheduled payload
}

// Started is the WorkflowStarted payload the engine records for a new run of the spec src,
// read from file: the source and its sha256, and the rules new runs follow.
func Started(workflowID, runID, file string, src []byte, input any, at time.Time) history.Started {
	sum := sha256.Sum256(src)
	return history.Started{WorkflowID: workflowID, RunID: runID, Input: history.MustData(input), SpecFile: file,
		SpecSource: string(src), SpecSHA256: hex.EncodeToString(sum[:]), ExecutionStarted: at,
		Rules: history.RulesCurrent}
}

// NewHost makes the host of a run of w recorded as st, starting at the virtual time at. The
// run starts with Begin, so its user may queue inputs before the first decisions.
func NewHost(w *spec.Workflow, st history.Started, at time.Time) *Host {
	return &Host{W: w, R: interpreter.New(w, st), Started: st, Start: at, Now: at, sched: map[string]history.ActivitySchedule{}}
}

// Begin records WorkflowStarted and the first decisions.
func (h *Host) Begin() ([]history.Event, error) {
	return h.Apply(history.Event{Type: history.WorkflowStarted, Data: history.MustData(h.Started)})
}

// Apply records an input at Now, then the decisions it yields, and returns them. It arms what
// they ask for (a try, a timer) and withdraws what they cancel. An input the interpreter
// refuses stays recorded, as the error says which.
func (h *Host) Apply(ev history.Event) ([]history.Event, error) {
	ev.Seq, ev.Time = uint64(len(h.Events)+1), h.Now
	h.Events = append(h.Events, ev)
	out, err := h.R.Apply(ev)
	if err != nil {
		return nil, err
	}
	h.recorded(ev)
	for _, d := range out {
		d.Seq = uint64(len(h.Events) + 1)
		h.Events = append(h.Events, d)
		h.decided(d)
		h.recorded(d)
	}
	return out, nil
}

func (h *Host) recorded(ev history.Event) {
	if h.Recorded != nil {
		h.Recorded(ev)
	}
}

// decided does the engine's part for a decision: a try is owed, a timer armed, or withdrawn.
func (h *Host) decided(d history.Event) {
	switch d.Type {
	case history.ActivityScheduled:
		h.sched[d.ActivityExecutionID], _ = history.DataOf[history.ActivitySchedule](d)
		h.agenda.push(h.Now, actKey(d.ActivityExecutionID), d)
	case history.ActivityRetryScheduled:
		rs, _ := history.DataOf[history.RetrySchedule](d)
		h.agenda.push(rs.AvailableAt, actKey(d.ActivityExecutionID), d)
	case history.ActivityCancelled:
		h.agenda.withdraw(actKey(d.ActivityExecutionID))
	case history.TimerScheduled:
		ts, _ := history.DataOf[history.TimerSchedule](d)
		h.agenda.push(ts.FireAt, timerKey(ts.TimerID), history.Event{Type: history.TimerFired,
			Data: history.MustData(history.TimerRef{TimerID: ts.TimerID})})
	case history.TimerCancelled:
		ref, _ := history.DataOf[history.TimerRef](d)
		h.agenda.withdraw(timerKey(ref.TimerID))
	case history.ChildWorkflowCancelRequested:
		h.agenda.withdraw(childKey(d.Step))
	}
}

// Due queues an input for the virtual time at: a try's outcome (it replaces the try it answers
// on the agenda), a child's or an awaited workflow's end, a signal, a cancel.
func (h *Host) Due(at time.Time, ev history.Event) { h.agenda.push(at, keyOf(ev), ev) }

// Next takes the earliest item of the agenda that still counts (ties in the order they were
// queued) and moves Now to its time if that is later. The item is an input to Deliver, or a
// try that is due (an ActivityScheduled or ActivityRetryScheduled: see TryOf). False when
// nothing is owed.
func (h *Host) Next() (history.Event, bool) {
	it, ok := h.agenda.pop()
	if !ok {
		return history.Event{}, false
	}
	if it.at.After(h.Now) {
		h.Now = it.at
	}
	return it.ev, true
}

// Deliver applies an input as the engine would: a try's outcome the run no longer expects (the
// try was superseded) is dropped before it is recorded, and Deliver returns false.
func (h *Host) Deliver(ev history.Event) (bool, error) {
	if IsOutcome(ev.Type) && !h.R.Expects(ev.ActivityExecutionID, ev.Attempt) {
		return false, nil
	}
	_, err := h.Apply(ev)
	return true, err
}

// IsOutcome tells the events that end one try of an activity.
func IsOutcome(t history.EventType) bool {
	return t == history.ActivityCompleted || t == history.ActivityAttemptFailed || t == history.ActivityTimedOut
}

// Tries are the tries owed and not yet answered, oldest first, each as the decision that asked
// for it (ActivityScheduled or ActivityRetryScheduled).
func (h *Host) Tries() []history.Event {
	var its []*item
	h.agenda.each(func(it *item) {
		if isTry(it.ev.Type) {
			its = append(its, it)
		}
	})
	slices.SortFunc(its, func(a, b *item) int { return a.order - b.order })
	out := make([]history.Event, len(its))
	for i, it := range its {
		out[i] = it.ev
	}
	return out
}

// Take removes the oldest owed try from the agenda and returns it; false when none is owed.
// Its user answers it then, or never (a try lost with its worker).
func (h *Host) Take() (history.Event, bool) {
	ts := h.Tries()
	if len(ts) == 0 {
		return history.Event{}, false
	}
	h.agenda.withdraw(actKey(ts[0].ActivityExecutionID))
	return ts[0], true
}

// Timers are the armed timers: timer id -> when it fires.
func (h *Host) Timers() map[string]time.Time {
	out := map[string]time.Time{}
	h.agenda.each(func(it *item) {
		if it.ev.Type == history.TimerFired {
			ref, _ := history.DataOf[history.TimerRef](it.ev)
			out[ref.TimerID] = it.at
		}
	})
	return out
}

// Fire takes timer id off the agenda and records it firing at Now.
func (h *Host) Fire(id string) ([]history.Event, error) {
	h.agenda.withdraw(timerKey(id))
	return h.Apply(history.Event{Type: history.TimerFired, Data: history.MustData(history.TimerRef{TimerID: id})})
}

// Last is the latest event recorded.
func (h *Host) Last() history.Event { return h.Events[len(h.Events)-1] }

// Closing is the payload of the run's terminal event; false while the run is open.
func (h *Host) Closing() (history.Closed, bool) {
	if len(h.Events) == 0 || !h.Last().Type.Terminal() {
		return history.Closed{}, false
	}
	c, err := history.DataOf[history.Closed](h.Last())
	return c, err == nil
}

// Output decodes the output a completed run closed with; nil for a run that did not complete.
func (h *Host) Output() any {
	c, ok := h.Closing()
	if !ok || h.Last().Type != history.WorkflowCompleted {
		return nil
	}
	var v any
	_ = json.Unmarshal(c.Output, &v)
	return v
}

func isTry(t history.EventType) bool {
	return t == history.ActivityScheduled || t == history.ActivityRetryScheduled
}

func actKey(execID string) string { return "act:" + execID }
func timerKey(id string) string   { return "timer:" + id }
func childKey(step string) string { return "child:" + step }

// keyOf is the agenda key of an input: what a cancellation withdraws it by.
func keyOf(ev history.Event) string {
	switch ev.Type {
	case history.ActivityCompleted, history.ActivityAttemptFailed, history.ActivityTimedOut,
		history.ActivityScheduled, history.ActivityRetryScheduled:
		return actKey(ev.ActivityExecutionID)
	case history.TimerFired:
		ref, _ := history.DataOf[history.TimerRef](ev)
		return timerKey(ref.TimerID)
	case history.ChildWorkflowCompleted, history.ChildWorkflowFailed, history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
		return childKey(ev.Step)
	}
	return ""
}
