package runview

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
)

// EventDetail is the short description of a timeline row (wend show): the few payload fields a
// person needs to follow the run; the full payload is in the JSON export. name names a step.
func EventDetail(ev history.Event, name func(path string) string) string {
	e := ev
	switch ev.Type {
	case history.WorkflowStarted:
		st, _ := history.DataOf[history.Started](ev)
		return "input " + Clip(string(orNull(st.Input)), 60)
	case history.ActivityScheduled:
		s, _ := history.DataOf[history.ActivitySchedule](ev)
		return fmt.Sprintf("%s.%s try %d", s.Plugin, s.Activity, e.Attempt)
	case history.ActivityStarted, history.ActivityHeartbeatRecorded, history.ActivityCancelled:
		return fmt.Sprintf("try %d", e.Attempt)
	case history.ActivityCompleted:
		r, _ := history.DataOf[history.ActivityResult](ev)
		return fmt.Sprintf("try %d output %s", e.Attempt, Clip(string(orNull(r.Output)), 60))
	case history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityFailed, history.StepFailed:
		af, _ := history.DataOf[history.AttemptFailure](ev)
		return failureBrief(af.Failure)
	case history.ActivityRetryScheduled:
		r, _ := history.DataOf[history.RetrySchedule](ev)
		if r.Redelivery {
			return fmt.Sprintf("try %d due %s (redelivery, not counted against tries)", r.NextAttempt, Clock(r.AvailableAt))
		}
		return fmt.Sprintf("try %d due %s (backoff %gs)", r.NextAttempt, Clock(r.AvailableAt), r.RetryBackoffSeconds)
	case history.ActivityAttemptInterrupted:
		r, _ := history.DataOf[history.AttemptInterruption](ev)
		return fmt.Sprintf("try %d: %s", e.Attempt, r.Reason)
	case history.TimerScheduled:
		t, _ := history.DataOf[history.TimerSchedule](ev)
		return fmt.Sprintf("%s (%s) fires %s", TimerName(t.TimerID, name), t.Purpose, Clock(t.FireAt))
	case history.TimerFired, history.TimerCancelled:
		t, _ := history.DataOf[history.TimerRef](ev)
		return TimerName(t.TimerID, name)
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
	case history.WorkflowMigrated:
		m, _ := history.DataOf[history.Migration](ev)
		s := fmt.Sprintf("file version %s → %s", shortHash(m.FromSHA256), shortHash(m.ToSHA256))
		if m.By != "" {
			s += " by " + m.By
		}
		return s
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
		parts = append(parts, "output "+Clip(string(c.Output), 60))
	}
	return strings.Join(parts, " ")
}

// failureBrief is a failure in one short phrase: error, category, and the non-retryable mark.
func failureBrief(f history.Failure) string {
	return FailureText(FailureOf(f), FailureStyle{Clip: 80})
}

// EventLine phrases an event as a progress line (wend run, wend resume...), naming steps with
// name; "" for events not worth a line. failure is the failure text the line carries ("" for
// none). said is the failure the line just above showed for the same run: a try's error that
// is also its step's and then the run's is said once, and the lines after it point back to it
// ("failed for good (as above)") instead of repeating a plugin's start error three times.
func EventLine(ev history.Event, name func(path string) string, said string) (line, failure string) {
	line, failure = eventLine(ev, name), lineFailure(ev)
	if failure != "" && failure == said && ev.Type != history.ActivityAttemptFailed && ev.Type != history.ActivityTimedOut {
		line = strings.TrimSuffix(strings.TrimSuffix(line, failure), ": ") + " (as above)"
	}
	return line, failure
}

// eventLine is EventLine without the repeat check.
func eventLine(ev history.Event, name func(path string) string) string {
	at := name(ev.Step)
	if at == "" {
		at = "workflow" // the run's own timers (deadlines)
	}
	switch ev.Type {
	case history.WorkflowStarted:
		st, _ := history.DataOf[history.Started](ev)
		return fmt.Sprintf("started (run %s, %s)", st.RunID, st.SpecFile)
	case history.WorkflowMigrated:
		m, _ := history.DataOf[history.Migration](ev)
		line := fmt.Sprintf("moved to file version %s (from %s)", shortHash(m.ToSHA256), shortHash(m.FromSHA256))
		if m.By != "" {
			line += " by " + m.By
		}
		return line
	case history.ActivityScheduled:
		a, _ := history.DataOf[history.ActivitySchedule](ev)
		return at + ": " + a.Plugin + "." + a.Activity + " scheduled" // a line a step: no fmt
	case history.ActivityCompleted:
		return at + ": completed (attempt " + strconv.Itoa(ev.Attempt) + ")"
	case history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityFailed, history.StepFailed:
		f, _ := history.DataOf[history.AttemptFailure](ev)
		verb := "attempt failed"
		switch ev.Type {
		case history.ActivityFailed:
			verb = "failed for good"
		case history.StepFailed:
			verb = "failed"
		case history.ActivityTimedOut:
			verb = "attempt timed out"
		}
		return fmt.Sprintf("%s: %s: %s", at, verb, FailureText(FailureOf(f.Failure), FailureStyle{}))
	case history.ActivityRetryScheduled:
		rs, _ := history.DataOf[history.RetrySchedule](ev)
		return fmt.Sprintf("%s: retry %d in %gs", at, rs.NextAttempt, rs.RetryBackoffSeconds)
	case history.TimerScheduled:
		ts, _ := history.DataOf[history.TimerSchedule](ev)
		return fmt.Sprintf("%s: %s until %s", at, ts.Purpose, ts.FireAt.Format(time.RFC3339))
	case history.SignalReceived:
		s, _ := history.DataOf[history.Signal](ev)
		return fmt.Sprintf("signal %q received", s.Name)
	case history.SignalApplied:
		s, _ := history.DataOf[history.Signal](ev)
		return fmt.Sprintf("%s: signal %q applied", at, s.Name)
	case history.ChildWorkflowScheduled:
		cs, _ := history.DataOf[history.ChildSchedule](ev)
		if cs.Shard != nil {
			return fmt.Sprintf("%s: shard child %s, items from %d", at, cs.WorkflowID, cs.Shard.Offset)
		}
		return fmt.Sprintf("%s: child workflow %s (%s)", at, cs.WorkflowID, cs.SpecFile)
	case history.WorkflowWaitScheduled:
		ws, _ := history.DataOf[history.WaitSchedule](ev)
		return fmt.Sprintf("%s: waiting for workflow %s", at, ws.WorkflowID)
	case history.CancelRequested:
		return "cancel requested"
	case history.CompensationStarted, history.CompensationCompleted, history.CompensationFailed:
		c, _ := history.DataOf[history.Compensation](ev)
		verb := map[history.EventType]string{history.CompensationStarted: "compensating",
			history.CompensationCompleted: "compensated", history.CompensationFailed: "compensation failed"}[ev.Type]
		line := fmt.Sprintf("%s: %s (%s)", at, verb, c.Reason)
		if c.Unknown {
			line += ", outcome of the step unknown"
		}
		if c.Failure != nil {
			line += ": " + FailureText(FailureOf(*c.Failure), FailureStyle{})
		}
		return line
	case history.WorkflowCompleted, history.WorkflowFailed, history.WorkflowCancelled, history.WorkflowTimedOut,
		history.WorkflowContinuedAsNew, history.WorkflowTerminated:
		c, _ := history.DataOf[history.Closed](ev)
		if c.Failure != nil {
			return fmt.Sprintf("%s: %s", ev.Type, FailureText(FailureOf(*c.Failure), FailureStyle{}))
		}
		return string(ev.Type)
	}
	return ""
}

// lineFailure is the failure text of an event's progress line: a try's, a step's or the run's
// failure; "" for other events.
func lineFailure(ev history.Event) string {
	switch ev.Type {
	case history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityFailed, history.StepFailed:
		f, _ := history.DataOf[history.AttemptFailure](ev)
		return FailureText(FailureOf(f.Failure), FailureStyle{})
	case history.WorkflowFailed:
		c, _ := history.DataOf[history.Closed](ev)
		if c.Failure != nil {
			return FailureText(FailureOf(*c.Failure), FailureStyle{})
		}
	}
	return ""
}

// shortHash is a spec hash as people read it: its first 12 hex digits.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
