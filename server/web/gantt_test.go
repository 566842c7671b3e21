package web

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// TestGanttBars places each step's bar in percent of the run's span: a finished step
// from its start to its end, an unfinished one to the span's end (the run's close or, open,
// its latest event), an instant one at the minimum width, a step never reached none; a
// step's failed tries are drawn over its bar, even when the step completed, and so are the
// waits between its tries (a backoff is not running).
func TestGanttBars(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []runview.Step{
		{Path: "steps[0]", Start: at(0), End: at(10), Status: runview.StepCompleted},
		{Path: "steps[1]", Start: at(10), End: at(10), Status: runview.StepCompleted},
		{Path: "steps[2]", Start: at(50), Status: runview.StepWaiting},
		{Path: "steps[3]", Status: runview.StepNone},
	}
	acts := []runview.Activity{{Step: "steps[0]", Tries: 5, Attempts: []runview.Attempt{
		{Attempt: 1, Outcome: runview.AttemptFailed, ScheduledAt: at(0), EndedAt: at(2), Error: &runview.AttemptError{Type: "Down", Message: "gateway down"}},
		{Attempt: 2, Outcome: runview.AttemptTimedOut, ScheduledAt: at(3), StartedAt: at(4), EndedAt: at(6)},
		{Attempt: 3, Outcome: runview.AttemptCompleted, ScheduledAt: at(7), EndedAt: at(10)},
	}}}
	tests := []struct {
		name string
		run  history.Run
		last time.Time
		span time.Duration
		bars [][2]string // X, W per step; "" for none
		// failed is steps[0]'s failed tries: X, W and title each; waits the gaps between its tries
		failed, waits, done []ganttTry
	}{
		{"closed", history.Run{StartedAt: at(0), ClosedAt: at(100)}, at(60), 100 * time.Second,
			[][2]string{{"0.00%", "10.00%"}, {"10.00%", "0.40%"}, {"50.00%", "50.00%"}, {"", ""}},
			[]ganttTry{{"0.00%", "2.00%", "try 1 failed: Down: gateway down"}, {"4.00%", "2.00%", "try 2 timed out"}},
			[]ganttTry{{"2.00%", "2.00%", "waiting 2s before try 2"}, {"6.00%", "1.00%", "waiting 1s before try 3"}},
			[]ganttTry{{"7.00%", "3.00%", "try 3 completed"}}},
		{"open to its latest event", history.Run{StartedAt: at(0)}, at(80), 80 * time.Second,
			[][2]string{{"0.00%", "12.50%"}, {"12.50%", "0.40%"}, {"62.50%", "37.50%"}, {"", ""}},
			[]ganttTry{{"0.00%", "2.50%", "try 1 failed: Down: gateway down"}, {"5.00%", "2.50%", "try 2 timed out"}},
			[]ganttTry{{"2.50%", "2.50%", "waiting 2s before try 2"}, {"7.50%", "1.25%", "waiting 1s before try 3"}},
			[]ganttTry{{"8.75%", "3.75%", "try 3 completed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, span := gantt(tt.run, steps, acts, tt.last)
			if span != tt.span {
				t.Errorf("span %v, want %v", span, tt.span)
			}
			for i, r := range rows {
				if got := [2]string{r.X, r.W}; got != tt.bars[i] || r.Bar != (tt.bars[i][0] != "") {
					t.Errorf("%s: bar %v (%v), want %v", r.Path, got, r.Bar, tt.bars[i])
				}
			}
			if !slices.Equal(rows[0].Failed, tt.failed) {
				t.Errorf("failed tries %v, want %v", rows[0].Failed, tt.failed)
			}
			if !slices.Equal(rows[0].Waits, tt.waits) {
				t.Errorf("waits between tries %v, want %v", rows[0].Waits, tt.waits)
			}
			if !slices.Equal(rows[0].Done, tt.done) {
				t.Errorf("completed tries %v, want %v", rows[0].Done, tt.done)
			}
			for _, r := range rows[1:] {
				if len(r.Failed) > 0 {
					t.Errorf("%s: failed tries %v of another step's activity", r.Path, r.Failed)
				}
			}
		})
	}
}

// TestUIGanttRenders: a run's page draws its timeline as SVG bars, one per step that
// ran, with attributes only (the CSP refuses inline styles) and no script.
func TestUIGanttRenders(t *testing.T) {
	f := newWebFixture(t)
	startMany(t, f, "g1", 3)
	_, _, body := f.send(req{Method: "GET", Path: "/ui/runs/g1", ReadSession: true})
	i := strings.Index(body, `id="gantt"`)
	if i < 0 {
		t.Fatalf("no timeline: %s", body)
	}
	g := body[i : i+strings.Index(body[i:], "</table>")]
	rows := regexp.MustCompile(`(?s)<tr class="gantt-row" data-path="([^"]+)" data-status="completed">.*?<rect class="bar s-completed" x="[0-9.]+%" y="1" width="[0-9.]+%"`).FindAllStringSubmatch(g, -1)
	var paths []string
	for _, m := range rows {
		paths = append(paths, m[1])
	}
	if strings.Join(paths, " ") != "steps[0] steps[0].steps[0] steps[1]" || strings.Count(g, "<rect") != 3 {
		t.Errorf("bars for %v, want the loop, its step and ship", paths)
	}
	if strings.Contains(g, "style=") || strings.Contains(g, "<script") {
		t.Errorf("the timeline uses inline style or script: %s", g)
	}
}
