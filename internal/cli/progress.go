package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// progress prints a line per step event of the runs a command follows, on stderr. On a
// terminal, for_each items also show as a running count on one line.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
	now   func() time.Time // the clock; tests set a fake one
	quiet bool

	// ids are each run's step ids by path (run id -> path -> id), read from its WorkflowStarted,
	// to name steps (history.StepName); a run followed from the middle is named by place.
	ids     map[string]map[string]string
	loops   map[string]*loopCount // for_each step path -> its items' activities (terminal only)
	pending bool                  // a count line is on screen without its newline
}

// loopCount is what a terminal shows of a for_each: its items' activities done and running.
type loopCount struct{ done, running int }

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now(), now: time.Now}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) observe(run history.Run, ev history.Event) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Type == history.WorkflowStarted {
		if p.ids == nil {
			p.ids = map[string]map[string]string{}
		}
		p.ids[run.RunID] = server.StepIDs([]history.Event{ev})
	}
	ids := p.ids[run.RunID]
	line := describe(ev, func(path string) string { return history.StepName(path, ids) })
	if line == "" {
		return
	}
	// Ids and messages come from the history and plugins: escaped, they cannot drive the terminal.
	id, line := printable(run.WorkflowID, ""), printable(line, "")
	at := p.now().Sub(p.start).Seconds()
	if p.tty && p.countItem(ev) {
		loop, _, _ := strings.Cut(ev.Step, "@")
		c := p.loops[loop]
		// One line per for_each, rewritten in place: a 10,000-item loop is not 20,000 lines.
		fmt.Fprintf(p.w, "\r%7.3fs %s %s for_each: %d done, %d running\x1b[K", at, id, printable(history.StepName(loop, ids), ""), c.done, c.running)
		p.pending = true
		return
	}
	if p.pending {
		fmt.Fprintln(p.w)
		p.pending = false
	}
	fmt.Fprintf(p.w, "%7.3fs %s %s\n", at, id, line)
}

// countItem updates the counts of the for_each an item's activity event belongs to, and says
// whether the event is one the count line stands for.
func (p *progress) countItem(ev history.Event) bool {
	loop, _, inLoop := strings.Cut(ev.Step, "@")
	if !inLoop {
		return false
	}
	if p.loops == nil {
		p.loops = map[string]*loopCount{}
	}
	c := p.loops[loop]
	if c == nil {
		c = &loopCount{}
		p.loops[loop] = c
	}
	switch ev.Type {
	case history.ActivityScheduled:
		c.running++
	case history.ActivityCompleted:
		c.running--
		c.done++
	case history.ActivityRetryScheduled:
	default:
		return false // failures and the rest keep their own lines
	}
	return true
}

// describe phrases an event for a person, naming steps with name; "" for events not worth a
// line.
func describe(ev history.Event, name func(path string) string) string {
	at := name(ev.Step)
	if at == "" {
		at = "workflow" // the run's own timers (deadlines)
	}
	switch ev.Type {
	case history.WorkflowStarted:
		st, _ := history.DataOf[history.Started](ev)
		return fmt.Sprintf("started (run %s, %s)", st.RunID, st.SpecFile)
	case history.ActivityScheduled:
		a, _ := history.DataOf[history.ActivitySchedule](ev)
		return fmt.Sprintf("%s: %s.%s scheduled", at, a.Plugin, a.Activity)
	case history.ActivityCompleted:
		return fmt.Sprintf("%s: completed (attempt %d)", at, ev.Attempt)
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
		return fmt.Sprintf("%s: %s: %s", at, verb, failureText(&f.Failure))
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
			line += ": " + failureText(c.Failure)
		}
		return line
	case history.WorkflowCompleted, history.WorkflowFailed, history.WorkflowCancelled, history.WorkflowTimedOut,
		history.WorkflowContinuedAsNew, history.WorkflowTerminated:
		c, _ := history.DataOf[history.Closed](ev)
		if c.Failure != nil {
			return fmt.Sprintf("%s: %s", ev.Type, failureText(c.Failure))
		}
		return string(ev.Type)
	}
	return ""
}

func failureText(f *history.Failure) string {
	s := f.Message
	if f.Type != "" {
		s = f.Type + ": " + s
	}
	s += " [" + f.Category
	if f.NonRetryable {
		s += ", non-retryable"
	}
	return s + "]"
}
