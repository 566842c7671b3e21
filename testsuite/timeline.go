package testsuite

import (
	"fmt"
	"github.com/wendflow/wend/internal/termtext"
	"strings"

	"github.com/wendflow/wend/history"
)

// A long timeline keeps its start and its end, where a failure usually shows.
const timelineHead, timelineTail = 40, 160

// Timeline renders a case's events, one a line, at their virtual offsets from the start:
// what a failed expectation is read against.
func Timeline(o *Outcome) []string {
	if len(o.Events) == 0 {
		return nil
	}
	t0 := o.Events[0].Time
	lines := make([]string, 0, min(len(o.Events), timelineHead+timelineTail+1))
	for i, e := range o.Events {
		if n := len(o.Events); n > timelineHead+timelineTail && i >= timelineHead && i < n-timelineTail {
			if i == timelineHead {
				lines = append(lines, fmt.Sprintf("... %d events left out ...", n-timelineHead-timelineTail))
			}
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-8s %3d %s", "+"+fmtDuration(e.Time.Sub(t0)), e.Seq, e.Type)
		if e.Step != "" {
			b.WriteString(" " + o.labels.label(e.Step))
		}
		if e.Attempt > 1 {
			fmt.Fprintf(&b, " #%d", e.Attempt)
		}
		if d := detail(e); d != "" {
			b.WriteString(" " + d)
		}
		lines = append(lines, termtext.OneLine(b.String()))
	}
	return lines
}

// detail is the part of an event's payload worth a glance.
func detail(e history.Event) string {
	switch e.Type {
	case history.ActivityScheduled:
		a, _ := history.DataOf[history.ActivitySchedule](e)
		return a.Plugin + "." + a.Activity + " " + clip(string(a.Input))
	case history.ActivityCompleted:
		r, _ := history.DataOf[history.ActivityResult](e)
		return clip(string(r.Output))
	case history.ActivityAttemptFailed, history.ActivityFailed, history.ActivityTimedOut, history.StepFailed:
		f, _ := history.DataOf[history.AttemptFailure](e)
		return failureBrief(&f.Failure)
	case history.ActivityRetryScheduled:
		r, _ := history.DataOf[history.RetrySchedule](e)
		return fmt.Sprintf("next try at +%s", fmtDuration(r.AvailableAt.Sub(e.Time)))
	case history.TimerScheduled:
		t, _ := history.DataOf[history.TimerSchedule](e)
		return fmt.Sprintf("%s %s fires in %s", t.TimerID, t.Purpose, fmtDuration(t.FireAt.Sub(e.Time)))
	case history.TimerFired, history.TimerCancelled:
		t, _ := history.DataOf[history.TimerRef](e)
		return t.TimerID
	case history.SignalReceived, history.SignalApplied:
		s, _ := history.DataOf[history.Signal](e)
		return strings.TrimSpace(s.Name + " " + clip(string(s.Data)))
	case history.CancelRequested, history.TerminateRequested:
		c, _ := history.DataOf[history.CancelRequest](e)
		return c.Reason
	case history.ChildWorkflowCompleted, history.WorkflowWaitCompleted, history.WorkflowCompleted:
		c, _ := history.DataOf[history.Closed](e)
		return clip(string(c.Output))
	case history.ChildWorkflowFailed, history.WorkflowWaitFailed, history.WorkflowFailed, history.WorkflowCancelled,
		history.WorkflowTimedOut, history.WorkflowTerminated:
		c, _ := history.DataOf[history.Closed](e)
		s := failureBrief(c.Failure)
		if c.ClosedReason != "" {
			s += " (" + c.ClosedReason + ")"
		}
		return s
	}
	return ""
}

func failureBrief(f *history.Failure) string {
	if f == nil {
		return ""
	}
	s := f.Category
	if f.Type != "" {
		s += "/" + f.Type
	}
	if f.NonRetryable {
		s += " non-retryable"
	}
	return s + ": " + clip(f.Message)
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}
