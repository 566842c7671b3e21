package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// ganttRow is one step of the run's timeline: a bar from the step's first event to its last
// (to the run's end, or its latest event, while the step is unfinished), placed in percent of
// the run's span so the server-rendered SVG needs no script and no inline style (the CSP).
type ganttRow struct {
	runview.Step
	Bar    bool   // the step has events; steps never reached have no bar
	X, W   string // the bar's left edge and width, in percent of the span
	Failed []ganttTry
	Waits  []ganttTry // the waits between tries (backoff, or wend down), drawn pale
	// Done is the completed try of a step that waited between tries, drawn at least
	// minBarPercent wide so a quick last try shows past the waits before it.
	Done []ganttTry
}

// ganttTry is a failed try drawn over its step's bar, so a step that completed on its third
// try shows the two that failed.
type ganttTry struct {
	X, W, Title string
}

// maxFailedTries bounds the tries drawn on one row (a loop's step has one per item's try).
const maxFailedTries = 50

// minBarPercent keeps an instant step visible.
const minBarPercent = 0.4

// gantt lays the step rows out over the run's span: from its start to its close or, for an
// open run, its latest event (the page is re-rendered when one is added).
func gantt(run history.Run, steps []runview.Step, acts []runview.Activity, lastEvent time.Time) (rows []ganttRow, span time.Duration) {
	from, to := run.StartedAt, run.ClosedAt
	if to.IsZero() {
		to = lastEvent
	}
	for _, s := range steps {
		if !s.Start.IsZero() && s.Start.Before(from) {
			from = s.Start
		}
		if s.End.After(to) {
			to = s.End
		}
	}
	span = to.Sub(from)
	pct := func(t time.Time) float64 {
		if span <= 0 {
			return 0
		}
		return 100 * float64(t.Sub(from)) / float64(span)
	}
	for _, s := range steps {
		r := ganttRow{Step: s}
		if !s.Start.IsZero() {
			end := s.End
			if end.IsZero() {
				end = to
			}
			x := min(pct(s.Start), 100-minBarPercent)
			w := max(pct(end)-x, minBarPercent)
			r.Bar, r.X, r.W = true, percent(x), percent(w)
		}
		r.Failed = failedTries(s.Path, acts, pct)
		r.Waits = retryWaits(s.Path, acts, pct)
		if len(r.Waits) > 0 {
			r.Done = completedTries(s.Path, acts, pct)
		}
		rows = append(rows, r)
	}
	return rows, span
}

// failedTries are the failed and timed-out tries of the activities of the step at path (a
// loop's instances included), placed as the step's bar is.
func failedTries(path string, acts []runview.Activity, pct func(time.Time) float64) []ganttTry {
	var out []ganttTry
	for _, a := range acts {
		if runview.StaticPath(a.Step) != path {
			continue
		}
		for _, at := range a.Attempts {
			if (at.Outcome != runview.AttemptFailed && at.Outcome != runview.AttemptTimedOut) || at.EndedAt.IsZero() || len(out) == maxFailedTries {
				continue
			}
			start := at.StartedAt
			if start.IsZero() {
				start = at.ScheduledAt
			}
			x := min(pct(start), 100-minBarPercent)
			w := max(pct(at.EndedAt)-x, minBarPercent)
			title := fmt.Sprintf("try %d %s", at.Attempt, strings.ReplaceAll(at.Outcome, "_", " "))
			if at.Error != nil {
				title += ": " + runview.ErrorText(at.Error.Type, at.Error.Message)
			}
			out = append(out, ganttTry{X: percent(x), W: percent(w), Title: title})
		}
	}
	return out
}

// retryWaits are the gaps between one try's end and the next try's start of the activities
// of the step at path: the step's bar spans them, but nothing ran (a backoff, or wend was
// down), so they must not read as running.
func retryWaits(path string, acts []runview.Activity, pct func(time.Time) float64) []ganttTry {
	var out []ganttTry
	for _, a := range acts {
		if runview.StaticPath(a.Step) != path {
			continue
		}
		for i := 1; i < len(a.Attempts) && len(out) < maxFailedTries; i++ {
			prev, next := a.Attempts[i-1], a.Attempts[i]
			start := next.StartedAt
			if start.IsZero() {
				start = next.ScheduledAt
			}
			if prev.EndedAt.IsZero() || !start.After(prev.EndedAt) {
				continue
			}
			x := pct(prev.EndedAt)
			out = append(out, ganttTry{X: percent(x), W: percent(pct(start) - x),
				Title: fmt.Sprintf("waiting %s before try %d", start.Sub(prev.EndedAt).Round(time.Millisecond), next.Attempt)})
		}
	}
	return out
}

// completedTries are the completed tries of the activities of the step at path.
func completedTries(path string, acts []runview.Activity, pct func(time.Time) float64) []ganttTry {
	var out []ganttTry
	for _, a := range acts {
		if runview.StaticPath(a.Step) != path {
			continue
		}
		for _, at := range a.Attempts {
			if at.Outcome != runview.AttemptCompleted || at.EndedAt.IsZero() || len(out) == maxFailedTries {
				continue
			}
			start := at.StartedAt
			if start.IsZero() {
				start = at.ScheduledAt
			}
			x := min(pct(start), 100-minBarPercent)
			w := max(pct(at.EndedAt)-x, minBarPercent)
			out = append(out, ganttTry{X: percent(x), W: percent(w), Title: fmt.Sprintf("try %d completed", at.Attempt)})
		}
	}
	return out
}

func percent(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + "%" }
