package export

import (
	"fmt"
	"strings"

	"github.com/wendflow/wend/history"
)

// eventDetail is the short description of a timeline row: the few payload fields a person
// needs to follow the run; the full payload is in the JSON export. name names a step.
func eventDetail(e Event, name func(path string) string) string {
	ev := history.Event{Seq: e.Seq, Type: history.EventType(e.Type), Data: e.Data}
	switch ev.Type {
	case history.WorkflowStarted:
		st, _ := history.DataOf[history.Started](ev)
		return "input " + clip(string(orNull(st.Input)), 60)
	case history.ActivityScheduled:
		s, _ := history.DataOf[history.ActivitySchedule](ev)
		return fmt.Sprintf("%s.%s try %d", s.Plugin, s.Activity, e.Attempt)
	case history.ActivityStarted, history.ActivityHeartbeatRecorded, history.ActivityCancelled:
		return fmt.Sprintf("try %d", e.Attempt)
	case history.ActivityCompleted:
		r, _ := history.DataOf[history.ActivityResult](ev)
		return fmt.Sprintf("try %d output %s", e.Attempt, clip(string(orNull(r.Output)), 60))
	case history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityFailed, history.StepFailed:
		af, _ := history.DataOf[history.AttemptFailure](ev)
		return failureBrief(af.Failure)
	case history.ActivityRetryScheduled:
		r, _ := history.DataOf[history.RetrySchedule](ev)
		if r.Redelivery {
			return fmt.Sprintf("try %d due %s (redelivery, not counted against tries)", r.NextAttempt, clock(r.AvailableAt))
		}
		return fmt.Sprintf("try %d due %s (backoff %gs)", r.NextAttempt, clock(r.AvailableAt), r.RetryBackoffSeconds)
	case history.ActivityAttemptInterrupted:
		r, _ := history.DataOf[history.AttemptInterruption](ev)
		return fmt.Sprintf("try %d: %s", e.Attempt, r.Reason)
	case history.TimerScheduled:
		t, _ := history.DataOf[history.TimerSchedule](ev)
		return fmt.Sprintf("%s (%s) fires %s", t.TimerID, t.Purpose, clock(t.FireAt))
	case history.TimerFired, history.TimerCancelled:
		t, _ := history.DataOf[history.TimerRef](ev)
		return t.TimerID
	case history.SignalReceived:
		s, _ := history.DataOf[history.Signal](ev)
		return s.Name
	case history.SignalApplied:
		s, _ := history.DataOf[history.Signal](ev)
		return fmt.Sprintf("%s (received at seq %d)", s.Name, s.ReceivedSeq)
	case history.ChildWorkflowScheduled:
		c, _ := history.DataOf[history.ChildSchedule](ev)
		return c.WorkflowID + " from " + c.SpecFile
	case history.WorkflowWaitScheduled:
		c, _ := history.DataOf[history.WaitSchedule](ev)
		return c.WorkflowID
	case history.CompensationStarted, history.CompensationCompleted, history.CompensationFailed:
		c, _ := history.DataOf[history.Compensation](ev)
		s := "undo " + name(c.Step) + " (on " + c.Reason + ")"
		if c.Unknown {
			s += ", outcome unknown"
		}
		if c.Failure != nil {
			s += ": " + failureBrief(*c.Failure)
		}
		return s
	case history.CancelRequested:
		c, _ := history.DataOf[history.CancelRequest](ev)
		return fmt.Sprintf("reason %q", c.Reason)
	}
	if ev.Type.Terminal() || ev.Type == history.ChildWorkflowCompleted || ev.Type == history.ChildWorkflowFailed ||
		ev.Type == history.WorkflowWaitCompleted || ev.Type == history.WorkflowWaitFailed {
		return closedBrief(ev)
	}
	return ""
}

func closedBrief(ev history.Event) string {
	c, _ := history.DataOf[history.Closed](ev)
	var parts []string
	if c.RunID != "" {
		parts = append(parts, "run "+c.RunID)
	}
	if c.TimeoutKind != "" {
		parts = append(parts, c.TimeoutKind)
	}
	if c.ClosedReason != "" {
		parts = append(parts, c.ClosedReason)
	}
	if c.Failure != nil {
		parts = append(parts, failureBrief(*c.Failure))
	} else if len(c.Output) > 0 {
		parts = append(parts, "output "+clip(string(c.Output), 60))
	}
	return strings.Join(parts, " ")
}

// failureBrief is a failure in one short phrase: error, category, and the non-retryable mark.
func failureBrief(f history.Failure) string {
	cat := f.Category
	if cat == "" {
		cat = Unclassified
	}
	s := fmt.Sprintf("%s [%s", clip(errText(f.Type, f.Message), 80), cat)
	if f.NonRetryable {
		s += ", non-retryable"
	}
	return s + "]"
}
