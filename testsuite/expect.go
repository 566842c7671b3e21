package testsuite

import (
	"fmt"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Mismatch is one expectation the run did not meet.
type Mismatch struct {
	Pos      spec.Pos `json:"-"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Path     string   `json:"path"` // e.g. cases[1].expect.status
	Expected string   `json:"expected"`
	Actual   string   `json:"actual"`
	Note     string   `json:"note,omitempty"`
}

func mismatch[T any](w *Want[T], expected, actual, note string) Mismatch {
	return Mismatch{Pos: w.Pos, Line: w.Pos.Line, Column: w.Pos.Col, Path: w.Path, Expected: expected, Actual: actual, Note: note}
}

// Check compares a case's outcome with its expectations, in the order the file may list them.
func Check(e *Expect, o *Outcome) []Mismatch {
	var ms []Mismatch
	add := func(m Mismatch) { ms = append(ms, m) }
	if w := e.Status; w != nil && w.V != o.Status {
		add(mismatch(w, w.V, o.Status, failureNote(o)))
	}
	if w := e.ClosedReason; w != nil && w.V != o.ClosedReason {
		add(mismatch(w, w.V, o.ClosedReason, ""))
	}
	if w := e.Output; w != nil && (o.Status != history.StatusCompleted || !equal(w.V, o.Output)) {
		add(mismatch(w, show(w.V), outputText(o), ""))
	}
	if w := e.OutputContains; w != nil {
		if ok, p := contains(w.V, o.Output, "output"); !ok || o.Status != history.StatusCompleted {
			add(mismatch(w, show(w.V), outputText(o), "differs at "+p))
		}
	}
	if w := e.State; w != nil && !equal(w.V, o.State) {
		add(mismatch(w, show(w.V), show(o.State), ""))
	}
	if w := e.StateContains; w != nil {
		if ok, p := contains(w.V, o.State, "state"); !ok {
			add(mismatch(w, show(w.V), show(o.State), "differs at "+p))
		}
	}
	if w := e.Calls; w != nil {
		if note := checkCalls(w.V, o); note != "" {
			add(mismatch(w, callsText(w.V), actualCalls(o.Calls), note))
		}
	}
	if w := e.Compensations; w != nil {
		got := compensations(o)
		if strings.Join(got, ",") != strings.Join(w.V, ",") || len(got) != len(w.V) {
			add(mismatch(w, show(w.V), show(got), ""))
		}
	}
	if w := e.Failure; w != nil {
		if note := checkFailure(w.V, o.Failure, o.labels); note != "" {
			add(mismatch(w, failureWantText(w.V), failureText(o.Failure, o.labels), note))
		}
	}
	if w := e.Duration; w != nil && (o.Status == history.StatusRunning || w.V != o.Duration) {
		actual := fmtDuration(o.Duration)
		if o.Status == history.StatusRunning {
			actual += " (still running)"
		}
		add(mismatch(w, fmtDuration(w.V), actual, ""))
	}
	if w := e.Events; w != nil {
		if note := checkEvents(w.V, o); note != "" {
			add(mismatch(w, eventsText(w.V), fmt.Sprintf("%d events (see the timeline)", len(o.Events)), note))
		}
	}
	return ms
}

func failureNote(o *Outcome) string {
	if o.Failure != nil {
		return "failure: " + failureText(o.Failure, o.labels)
	}
	return ""
}

func outputText(o *Outcome) string {
	if o.Status != history.StatusCompleted {
		return "no output: the run is " + o.Status
	}
	return show(o.Output)
}

func checkCalls(want []CallWant, o *Outcome) string {
	if len(want) != len(o.Calls) {
		return fmt.Sprintf("%d calls expected, %d made", len(want), len(o.Calls))
	}
	for i, w := range want {
		g := o.Calls[i]
		switch {
		case w.Activity != g.Activity:
			return fmt.Sprintf("call %d is %s, not %s", i+1, g.Activity, w.Activity)
		case w.Step != "" && w.Step != g.Step && w.Step != history.StaticStepPath(g.Step):
			return fmt.Sprintf("call %d is at step %s, not %s", i+1, g.Step, w.Step)
		case w.Attempt != 0 && w.Attempt != g.Attempt:
			return fmt.Sprintf("call %d is attempt %d, not %d", i+1, g.Attempt, w.Attempt)
		case w.HasInput:
			if ok, p := contains(w.Input, g.Input, "input"); !ok {
				return fmt.Sprintf("call %d's input differs at %s: %s", i+1, p, show(g.Input))
			}
		}
	}
	return ""
}

func callsText(cs []CallWant) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Activity
		if c.Step != "" {
			parts[i] += "@" + c.Step
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func actualCalls(cs []Call) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Activity + "@" + c.Step
		if c.Attempt > 1 {
			parts[i] += fmt.Sprintf("#%d", c.Attempt)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// compensations lists the compensated steps in the order their compensation started.
func compensations(o *Outcome) []string {
	out := []string{}
	for _, e := range o.Events {
		if e.Type == history.CompensationStarted {
			out = append(out, o.labels.label(e.Step))
		}
	}
	return out
}

func checkFailure(w FailureWant, f *history.Failure, l *labels) string {
	if f == nil {
		return "the run has no failure"
	}
	switch {
	case w.Type != "" && w.Type != f.Type:
		return "type differs"
	case w.Category != "" && w.Category != f.Category:
		return "category differs"
	case w.Message != "" && !strings.Contains(f.Message, w.Message):
		return "message does not contain the expected text"
	case w.Step != "" && !l.matches(w.Step, f.Step):
		return "step differs"
	case w.NonRetryable != nil && *w.NonRetryable != f.NonRetryable:
		return "non_retryable differs"
	}
	return ""
}

func failureWantText(w FailureWant) string {
	var parts []string
	for _, kv := range [][2]string{{"type", w.Type}, {"category", w.Category}, {"message", w.Message}, {"step", w.Step}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if w.NonRetryable != nil {
		parts = append(parts, fmt.Sprintf("non_retryable=%t", *w.NonRetryable))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// failureText is the run's failure as a test report shows it, its step named by id where the
// step has one (l.label), as a test file names it.
func failureText(f *history.Failure, l *labels) string {
	if f == nil {
		return "none"
	}
	step := f.Step
	if l != nil {
		step = l.label(f.Step)
	}
	return fmt.Sprintf("{type=%s category=%s message=%q step=%s non_retryable=%t}", f.Type, f.Category, f.Message, step, f.NonRetryable)
}

// checkEvents checks that the wanted events occur in this order (others may come between).
func checkEvents(want []EventWant, o *Outcome) string {
	i := 0
	for _, e := range o.Events {
		if i == len(want) {
			break
		}
		w := want[i]
		if string(e.Type) == w.Type && (w.Step == "" || o.labels.matches(w.Step, e.Step)) {
			i++
		}
	}
	if i < len(want) {
		return fmt.Sprintf("event %d (%s) not found after the ones before it", i+1, eventsText(want[i:i+1]))
	}
	return ""
}

func eventsText(es []EventWant) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Type
		if e.Step != "" {
			parts[i] += " " + e.Step
		}
	}
	return strings.Join(parts, ", ")
}

// fmtDuration prints a virtual duration the way test files write them (1d2h, 30s, 0s).
func fmtDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if days := d / (24 * time.Hour); days > 0 {
		fmt.Fprintf(&b, "%dd", days)
		d -= days * 24 * time.Hour
	}
	if d > 0 {
		s := d.String()
		s = strings.TrimSuffix(strings.Replace(s, "h0m0s", "h", 1), "")
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		b.WriteString(s)
	}
	return b.String()
}
