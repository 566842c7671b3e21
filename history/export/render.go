package export

import (
	"fmt"
	"github.com/wendflow/wend/internal/termtext"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// Render writes doc for a person (`wend show`): a header, the timeline (one line per event),
// each activity with its attempts and errors, failures with their category and a
// non-retryable mark, pending timers and signals, children, compensations and the metrics.
// It shows the same facts as the JSON; it decides nothing the export did not. Steps are named
// by their place (step 2 › branch 1); RenderNamed names them by their ids too.
func Render(w io.Writer, doc *Document) error {
	return RenderNamed(w, doc, nil)
}

// RenderNamed is Render naming steps for a person (runview.StepName) with ids, the run's
// spec's step ids by path (spec.Workflow.StepIDs); the JSON export keeps the paths.
func RenderNamed(w io.Writer, doc *Document, ids map[string]string) error {
	p := &printer{w: w, ids: ids}
	p.header(doc.Workflow)
	p.timeline(doc.HistoryEvents, caughtSeqs(doc.Failures))
	p.activities(doc.Activities)
	p.failures(doc.Failures)
	p.waits(doc)
	p.children(doc.Children)
	p.compensations(doc.Compensations)
	p.metrics(doc.OperatorMetrics)
	return p.err
}

// printer keeps the first write error, so the sections stay free of error plumbing.
type printer struct {
	w   io.Writer
	err error
	ids map[string]string // static step path -> id, for step names
}

// step names the step at path for a person.
func (p *printer) step(path string) string { return runview.StepName(path, p.ids) }

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// table writes aligned rows (cells separated by \t) under a section title.
func (p *printer) table(title string, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	p.f("\n%s\n", title)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\n", strings.Join(oneLineAll(r), "\t"))
	}
	_ = tw.Flush() // writes to a strings.Builder cannot fail
	for line := range strings.Lines(b.String()) {
		p.f("%s\n", strings.TrimRight(line, " \n"))
	}
}

func (p *printer) header(w Workflow) {
	uncompensated := make([]string, len(w.Uncompensated))
	for i, path := range w.Uncompensated {
		uncompensated[i] = p.step(path)
	}
	rows := [][]string{
		{"workflow", w.WorkflowID},
		{"run", w.RunID},
		{"name", w.Name},
		{"status", statusLine(w)},
		{"spec", fmt.Sprintf("%s (sha256 %s)", w.SpecFile, short(w.SpecSHA256, 12))},
	}
	if w.ParentRunID != "" {
		// The parent's spec is another file: its steps are named by place.
		rows = append(rows, []string{"parent", fmt.Sprintf("run %s, step %s", w.ParentRunID, runview.StepName(w.ParentStep, nil))})
	}
	rows = append(rows, []string{"started", stamp(w.StartedAt)})
	if !w.ClosedAt.IsZero() {
		rows = append(rows, []string{"closed", fmt.Sprintf("%s (after %s)", stamp(w.ClosedAt), w.ClosedAt.Sub(w.StartedAt))})
	}
	if t := w.Timeouts; t != nil {
		var parts []string
		if t.Run != nil {
			parts = append(parts, deadlineText("run", *t.Run))
		}
		if t.Execution != nil {
			parts = append(parts, deadlineText("execution", *t.Execution))
		}
		rows = append(rows, []string{"timeouts", strings.Join(parts, "; ")})
	}
	rows = append(rows, []string{"input", clip(string(w.Input), 500)})
	if w.Output != nil {
		rows = append(rows, []string{"output", clip(string(w.Output), 500)})
	}
	if w.Failure != nil {
		rows = append(rows, []string{"failure", p.failureText(*w.Failure)})
	}
	if w.CancelReason != "" {
		rows = append(rows, []string{"cancel", fmt.Sprintf("reason %q", w.CancelReason)})
	}
	if len(w.Uncompensated) > 0 {
		rows = append(rows, []string{"uncompensated", strings.Join(uncompensated, ", ")})
	}
	if w.NextRunID != "" {
		rows = append(rows, []string{"continued as", w.NextRunID})
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], termtext.OneLine(r[1]))
	}
	_ = tw.Flush()
	p.f("%s", b.String())
}

func statusLine(w Workflow) string {
	s := w.Status
	if w.ClosedReason != "" && w.ClosedReason != w.Status {
		s += " (" + w.ClosedReason + ")"
	}
	if w.TimeoutKind != "" {
		s += ", " + w.TimeoutKind
	}
	return s
}

func deadlineText(kind string, d Deadline) string {
	return fmt.Sprintf("%s %s, deadline %s (%s)", kind, time.Duration(d.Seconds*float64(time.Second)), stamp(d.Deadline), d.Status)
}

// caughtSeqs are the seqs of the failures a catch handled.
func caughtSeqs(fs []Failure) map[uint64]bool {
	out := map[uint64]bool{}
	for _, f := range fs {
		if f.Caught {
			out[f.Seq] = true
		}
	}
	return out
}

func (p *printer) timeline(evs []Event, caught map[uint64]bool) {
	rows := make([][]string, 0, len(evs))
	for _, e := range evs {
		ev := history.Event{Seq: e.Seq, Type: history.EventType(e.Type), Step: e.Step, Attempt: e.Attempt, Data: e.Data}
		detail := runview.EventDetail(ev, p.step)
		if caught[e.Seq] {
			detail = "caught: " + detail
		}
		rows = append(rows, []string{fmt.Sprint(e.Seq), clock(e.Time), e.Type, p.step(e.Step), detail})
	}
	p.table("timeline (UTC)", rows)
}

func (p *printer) activities(acts []Activity) {
	if len(acts) == 0 {
		return
	}
	p.f("\nactivities (times UTC)\n")
	for _, a := range acts {
		mark := ""
		if a.NonRetryable {
			mark = "  NON-RETRYABLE"
		}
		p.f("  %s\n", termtext.OneLine(fmt.Sprintf("%s  %s.%s  %s%s  (execution %s, tries %s)", p.step(a.Step), a.Plugin, a.Activity, a.Status, mark, a.ActivityExecutionID, runview.TriesText(a))))
		if !a.NextAttemptAt.IsZero() {
			p.f("    next try due %s\n", stamp(a.NextAttemptAt))
		}
		var rows [][]string
		for _, at := range a.Attempts {
			rows = append(rows, []string{fmt.Sprintf("#%d", at.Attempt), at.Outcome, attemptTimes(at), attemptNote(at)})
			if r := at.Retry; r != nil {
				rows = append(rows, []string{"", "", "", fmt.Sprintf("retry: try %d after %gs backoff, due %s", r.NextAttempt, r.RetryBackoffSeconds, clock(r.AvailableAt))})
			}
		}
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, r := range rows {
			fmt.Fprintf(tw, "    %s\n", strings.Join(oneLineAll(r), "\t"))
		}
		_ = tw.Flush()
		for line := range strings.Lines(b.String()) {
			p.f("%s\n", strings.TrimRight(line, " \n"))
		}
	}
}

func attemptTimes(at Attempt) string {
	from := at.ScheduledAt
	if !at.StartedAt.IsZero() {
		from = at.StartedAt
	}
	if at.EndedAt.IsZero() {
		return clock(from) + " → …"
	}
	return clock(from) + " → " + clock(at.EndedAt)
}

func attemptNote(at Attempt) string {
	var parts []string
	if e := at.Error; e != nil {
		parts = append(parts, runview.FailureText(e.Failure(), runview.FailureStyle{}))
	}
	if at.Heartbeats > 0 {
		parts = append(parts, fmt.Sprintf("%d heartbeats, last %s", at.Heartbeats, clock(at.LastHeartbeatAt)))
	}
	return strings.Join(parts, "; ")
}

func (p *printer) failures(fs []Failure) {
	rows := make([][]string, 0, len(fs))
	for _, f := range fs {
		where := p.step(f.Step)
		if f.Attempt > 0 {
			where += fmt.Sprintf(" #%d", f.Attempt)
		}
		var marks []string
		if f.NonRetryable {
			marks = append(marks, "NON-RETRYABLE")
		}
		if f.Caught {
			marks = append(marks, "CAUGHT")
		}
		mark := strings.Join(marks, " ")
		rows = append(rows, []string{"seq " + fmt.Sprint(f.Seq), f.EventType, f.FailureCategory + "/" + f.PropagationKind,
			mark, where, runview.ErrorText(f.Type, f.Message)})
	}
	p.table("failures", rows)
}

// waits lists what is still owed: timers not fired or cancelled and signals no step took.
func (p *printer) waits(doc *Document) {
	var rows [][]string
	for _, t := range doc.Timers {
		if t.Status == runview.TimerScheduled {
			rows = append(rows, []string{"timer", runview.TimerName(t.TimerID, p.step), t.Purpose, "fires " + stamp(t.FireAt)})
		}
	}
	p.table("pending timers", rows)
	rows = nil
	for _, s := range doc.Signals {
		if s.Pending {
			rows = append(rows, []string{"signal", s.Name, fmt.Sprintf("received seq %d at %s", s.ReceivedSeq, stamp(s.ReceivedAt)), clip(string(s.Data), 80)})
		}
	}
	p.table("pending signals (no step has taken them)", rows)
}

func (p *printer) children(cs []Child) {
	rows := make([][]string, 0, len(cs))
	for _, c := range cs {
		note := c.SpecFile
		switch {
		case c.Failure != nil:
			note = p.failureText(*c.Failure)
		case c.Output != nil:
			note = "output " + clip(string(c.Output), 80)
		}
		rows = append(rows, []string{p.step(c.Step), c.Kind, c.WorkflowID, c.Status, c.RunID, note})
	}
	p.table("children", rows)
}

func (p *printer) compensations(cs []Compensation) {
	rows := make([][]string, 0, len(cs))
	for _, c := range cs {
		note := ""
		if c.OutcomeUnknown {
			note = "outcome of the step unknown (in flight at the cancel)"
		}
		if c.Failure != nil {
			note = p.failureText(*c.Failure)
		}
		rows = append(rows, []string{p.step(c.Step), c.Status, "on " + c.Reason, clock(c.StartedAt), note})
	}
	p.table("compensations", rows)
}

func (p *printer) metrics(m Metrics) {
	a := m.Activities
	p.f("\nmetrics\n")
	p.f("  activities     %d total: %d completed, %d failed, %d retrying, %d running, %d scheduled, %d cancelled\n",
		a.Total, a.Completed, a.Failed, a.Retrying, a.Running, a.Scheduled, a.Cancelled)
	p.f("  attempts       %d: %d failed (%d timed out), %d retries, %d non-retryable failures\n",
		a.Attempts, a.FailedAttempts, a.TimedOutAttempts, a.Retries, a.NonRetryableFailures)
	p.f("  backlog        %d pending activities (%d retrying), %d timers, %d children\n",
		m.Backlog.PendingActivities, m.Backlog.RetryingActivities, m.Backlog.PendingTimers, m.Backlog.PendingChildren)
	p.f("  signals        %d received, %d pending\n", m.Signals.Received, m.Signals.Pending)
	p.f("  compensations  %d: %d completed, %d failed\n", m.Compensations.Total, m.Compensations.Completed, m.Compensations.Failed)
	p.f("  history        %d events, %d payload bytes\n", m.History.Events, m.History.PayloadBytes)
}

func (p *printer) failureText(f Failure) string {
	return runview.FailureText(f, runview.FailureStyle{Propagation: true, At: p.step})
}

var (
	stamp = runview.Stamp
	clock = runview.Clock
	clip  = runview.Clip
)

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func oneLineAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = termtext.OneLine(c)
	}
	return out
}
