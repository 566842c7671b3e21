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
	byPath := map[string][]*runview.Activity{} // pointers: a loop's step has one per item
	for i := range acts {
		p := runview.StaticPath(acts[i].Step)
		byPath[p] = append(byPath[p], &acts[i])
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
		r.Failed, r.Waits, r.Done = tries(byPath[s.Path], pct)
		rows = append(rows, r)
	}
	return rows, span
}

// tries places, in one walk over the activities of one step (a loop's instances included),
// what its row draws over the bar: the failed and timed-out tries; the waits between one
// try's end and the next one's start, which the bar spans though nothing ran (a backoff, or
// wend was down), so they must not read as running; and, only for a step that waited, its
// completed tries, so a quick last try shows past the waits before it. Each kind is bounded
// by maxFailedTries.
func tries(acts []*runview.Activity, pct func(time.Time) float64) (failed, waits, done []ganttTry) {
	bar := func(at runview.Attempt, title string) ganttTry {
		x := min(pct(tryStart(at)), 100-minBarPercent)
		w := max(pct(at.EndedAt)-x, minBarPercent)
		return ganttTry{X: percent(x), W: percent(w), Title: title}
	}
	for _, a := range acts {
		for i, at := range a.Attempts {
			if i > 0 && len(waits) < maxFailedTries {
				prev := a.Attempts[i-1]
				if start := tryStart(at); !prev.EndedAt.IsZero() && start.After(prev.EndedAt) {
					x := pct(prev.EndedAt)
					waits = append(waits, ganttTry{X: percent(x), W: percent(pct(start) - x),
						Title: fmt.Sprintf("waiting %s before try %d", start.Sub(prev.EndedAt).Round(time.Millisecond), at.Attempt)})
				}
			}
			if at.EndedAt.IsZero() {
				continue
			}
			switch {
			case (at.Outcome == runview.AttemptFailed || at.Outcome == runview.AttemptTimedOut) && len(failed) < maxFailedTries:
				title := fmt.Sprintf("try %d %s", at.Attempt, strings.ReplaceAll(at.Outcome, "_", " "))
				if at.Error != nil {
					title += ": " + runview.ErrorText(at.Error.Type, at.Error.Message)
				}
				failed = append(failed, bar(at, title))
			case at.Outcome == runview.AttemptCompleted && len(done) < maxFailedTries:
				done = append(done, bar(at, fmt.Sprintf("try %d completed", at.Attempt)))
			}
		}
	}
	if len(waits) == 0 {
		done = nil
	}
	return failed, waits, done
}

// tryStart is when a try began running, or, for one with no start on record, when it was
// scheduled.
func tryStart(at runview.Attempt) time.Time {
	if at.StartedAt.IsZero() {
		return at.ScheduledAt
	}
	return at.StartedAt
}

func percent(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + "%" }
