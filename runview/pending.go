package runview

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/wendflow/wend/api"
)

// Wait kinds.
const (
	WaitActivity = "activity"
	WaitTimer    = "timer"
	WaitSignal   = "signal"
	WaitChild    = "child_workflow"
	WaitWorkflow = "workflow"
)

// Pending lists what the run is owed according to its history alone, oldest first:
// activities not closed (in flight or backing off before a retry), timers not fired or
// cancelled, children and awaited workflows not reported back. Signal waits leave no event of
// their own; Waits adds them.
func (v *View) Pending() []Wait {
	type owed struct {
		seq uint64
		w   Wait
	}
	var out []owed
	for _, a := range v.Activities {
		if a.Status == ActivityCompleted || a.Status == ActivityFailed || a.Status == ActivityCancelled {
			continue
		}
		w := Wait{Kind: WaitActivity, Step: a.Step, Since: a.ScheduledAt, Activity: a.Plugin + "." + a.Activity,
			ActivityExecutionID: a.ActivityExecutionID, Attempt: a.Attempts[len(a.Attempts)-1].Attempt, Until: a.NextAttemptAt}
		out = append(out, owed{a.ScheduledSeq, w})
	}
	for _, t := range v.Timers {
		if t.Status == TimerScheduled {
			out = append(out, owed{t.ScheduledSeq, Wait{Kind: WaitTimer, Step: t.Step, Since: t.ScheduledAt, Until: t.FireAt, Purpose: t.Purpose}})
		}
	}
	for _, c := range v.Children {
		if c.Status != ChildRunning {
			continue
		}
		kind := WaitChild
		if c.Kind == ChildWait {
			kind = WaitWorkflow
		}
		out = append(out, owed{c.ScheduledSeq, Wait{Kind: kind, Step: c.Step, Since: c.ScheduledAt, WorkflowID: c.WorkflowID}})
	}
	slices.SortFunc(out, func(a, b owed) int { return cmp.Compare(a.seq, b.seq) })
	waits := make([]Wait, len(out))
	for i, o := range out {
		waits[i] = o.w
	}
	return waits
}

// Waits is what an open run waits for now: Pending and the signal waits a replay finds.
// Empty once the run has closed.
func (v *View) Waits() []Wait {
	if !v.Open() {
		return []Wait{}
	}
	return append(v.Pending(), v.Live().SignalWaits...)
}

// PendingSignals are the signals received and not yet taken by a wait_for_signal step (kept
// for a later wait), oldest first, with their data.
func (v *View) PendingSignals() []Signal {
	out := []Signal{}
	for _, s := range v.Signals {
		if s.Pending {
			out = append(out, s)
		}
	}
	return out
}

// WaitText phrases one current wait for a person, naming its step with name: "activity
// demo.charge at charge (attempt 2, retry due ...) since ...".
func WaitText(w Wait, name func(path string) string) string {
	step := name(w.Step)
	at := func(t time.Time) string { return t.UTC().Format(time.DateTime) } // a wait is read to the second
	var s string
	switch w.Kind {
	case WaitActivity:
		s = fmt.Sprintf("activity %s at %s (attempt %d", w.Activity, step, w.Attempt)
		if !w.Until.IsZero() {
			s += ", retry due " + at(w.Until)
		}
		s += ")"
	case WaitTimer:
		s = fmt.Sprintf("timer (%s) at %s until %s", w.Purpose, step, at(w.Until))
	case WaitSignal:
		s = fmt.Sprintf("signal %q at %s", w.Signal, step)
	case WaitChild:
		s = fmt.Sprintf("child workflow %s at %s", w.WorkflowID, step)
	case WaitWorkflow:
		s = fmt.Sprintf("workflow %s at %s", w.WorkflowID, step)
	default:
		s = w.Kind + " at " + step
	}
	if !w.Since.IsZero() {
		s += " since " + at(w.Since)
	}
	return s
}

// StepNamer names the steps of the run d describes (StepName with the ids of the spec its
// first event recorded).
func StepNamer(d Detail) func(path string) string {
	return func(path string) string {
		var ids map[string]string
		if len(d.Events) > 0 {
			ids = SpecOf(d.Events[0]).StepIDs()
		}
		return StepName(path, ids)
	}
}

// Wait is one thing an open run waits for (api.Wait).
type Wait = api.Wait
