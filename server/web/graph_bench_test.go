package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
)

// bigRun is a run of a 500-step workflow (497 activities, then a for_each of two) with
// about 100,000 events, most of them the loop's items; the last item is still running.
func bigRun(tb testing.TB) (history.Run, []history.Event) {
	tb.Helper()
	var src strings.Builder
	src.WriteString("wend: v1\nname: big\nplugins: {demo: ./demo}\nsteps:\n")
	for i := range 497 {
		fmt.Fprintf(&src, "  - {id: s%d, activity: demo.echo, with: {n: %d}}\n", i, i)
	}
	src.WriteString("  - id: each\n    for_each: \"${{ input.items }}\"\n    steps:\n      - {id: a, activity: demo.echo, with: {x: 1}}\n      - {id: b, activity: demo.echo, with: {x: 2}}\n")
	run := history.Run{WorkflowID: "big", RunID: "0123456789abcdef", Name: "big", Status: history.StatusRunning}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var evs []history.Event
	add := func(typ history.EventType, step, exec string, data any) {
		var raw json.RawMessage
		if data != nil {
			raw, _ = json.Marshal(data)
		}
		evs = append(evs, history.Event{Seq: uint64(len(evs) + 1), Time: t0.Add(time.Duration(len(evs)) * time.Millisecond),
			Type: typ, Step: step, ActivityExecutionID: exec, Attempt: 1, Data: raw})
	}
	add(history.WorkflowStarted, "", "", history.Started{WorkflowID: run.WorkflowID, RunID: run.RunID, SpecFile: "big.wend.yaml",
		SpecSource: src.String(), Input: json.RawMessage(`{}`)})
	act := func(step string, done bool) {
		exec := run.RunID + ":" + step
		add(history.ActivityScheduled, step, exec, history.ActivitySchedule{Plugin: "demo", Activity: "echo", Input: json.RawMessage(`{"x":1}`)})
		add(history.ActivityStarted, step, exec, nil)
		if done {
			add(history.ActivityCompleted, step, exec, history.ActivityResult{Output: json.RawMessage(`{"x":1}`)})
		}
	}
	for i := range 497 {
		act(fmt.Sprintf("steps[%d]", i), true)
	}
	item := 0
	for ; len(evs) < 100_000-6; item++ {
		act(fmt.Sprintf("steps[497]@%d.steps[0]", item), true)
		act(fmt.Sprintf("steps[497]@%d.steps[1]", item), true)
	}
	act(fmt.Sprintf("steps[497]@%d.steps[0]", item), false)
	run.LastSeq = uint64(len(evs))
	return run, evs
}

// drawRun is what the run page does to draw a folded run: the step tree, the waits, the
// loop items' states, the marks and the SVG.
func drawRun(view *runview.View, events []history.Event) int {
	v := &runView{URL: "/ui/runs/x", params: url.Values{}}
	v.Steps, v.Waits = view.Steps(), view.Waits()
	return len(v.runGraph(view, events))
}

// BenchmarkRunGraph draws a 500-step run of 100,000 events from its folded view (the fold
// is the page's anyway, for the timeline): the cost the drawing adds to a run's page.
func BenchmarkRunGraph(b *testing.B) {
	run, evs := bigRun(b)
	view, err := runview.Fold(run, evs)
	if err != nil {
		b.Fatal(err)
	}
	if view.Spec() == nil {
		b.Fatal("the spec does not load")
	}
	n := 0
	b.ResetTimer()
	for b.Loop() {
		n = drawRun(view, evs)
	}
	b.ReportMetric(float64(n), "svg-bytes")
	b.ReportMetric(float64(len(evs)), "events")
}

// BenchmarkRunGraphFold is BenchmarkRunGraph with the fold of the 100,000 events, as a page
// load does it.
func BenchmarkRunGraphFold(b *testing.B) {
	run, evs := bigRun(b)
	for b.Loop() {
		view, err := runview.Fold(run, evs)
		if err != nil {
			b.Fatal(err)
		}
		drawRun(view, evs)
	}
}

// The big run draws every step, with the loop's item counts and the running item.
func TestBigRunDrawing(t *testing.T) {
	run, evs := bigRun(t)
	view, err := runview.Fold(run, evs)
	if err != nil {
		t.Fatal(err)
	}
	v := &runView{URL: "/ui/runs/x", params: url.Values{}}
	v.Steps, v.Waits = view.Steps(), view.Waits()
	svg := string(v.runGraph(view, evs))
	if n := strings.Count(svg, `data-state="`); n != 500 {
		t.Errorf("%d steps drawn with a state, want 500", n)
	}
	items := (len(evs) - 1 - 497*3 - 2) / 6
	if want := fmt.Sprintf("%d items: 1 running, %d completed", items+1, items); !strings.Contains(svg, want) {
		i := strings.Index(svg, `data-step="each"`)
		t.Errorf("the loop's box lacks %q: %.600s", want, svg[max(i, 0):])
	}
}

// BenchmarkRunPage serves the whole page of the big run (a 500-step workflow, 100,000
// events) from a store: read, fold, step tree, drawing, timeline, events page, render.
// first is a page of a run no page has read yet (a fresh UI: the fold is done); again is the
// next page of the same, unchanged run (the fold is kept); poll is the page's live part
// polled with its version while the run has not changed (304).
func BenchmarkRunPage(b *testing.B) {
	run, evs := bigRun(b)
	store := history.NewMemStore()
	run.SpecFile, run.StartedAt = "big.wend.yaml", evs[0].Time
	if err := store.Commit(b.Context(), history.Commit{Runs: []history.RunUpdate{{Run: run, Events: evs}}}); err != nil {
		b.Fatal(err)
	}
	eng := engine.New(engine.Options{Store: store, Activities: servertest.Acts{}, Logf: b.Logf})
	b.Cleanup(func() { eng.Close() })
	srv := server.New(eng, store)
	get := func(b *testing.B, u *UI, path string, h http.Header, code int) int {
		w := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		maps.Copy(req.Header, h)
		u.ServeHTTP(w, req)
		if w.Code != code {
			b.Fatalf("%d %.300s", w.Code, w.Body.String())
		}
		return w.Body.Len()
	}
	page := "/ui/runs/" + run.RunID
	b.Run("first", func(b *testing.B) {
		size := 0
		for b.Loop() {
			size = get(b, New(srv), page, nil, 200)
		}
		b.ReportMetric(float64(size), "page-bytes")
	})
	b.Run("again", func(b *testing.B) {
		u := New(srv)
		get(b, u, page, nil, 200)
		size := 0
		for b.Loop() {
			size = get(b, u, page, nil, 200)
		}
		b.ReportMetric(float64(size), "page-bytes")
	})
	b.Run("poll", func(b *testing.B) {
		u := New(srv)
		h := http.Header{"If-None-Match": {etagOf(runVersion(run))}}
		for b.Loop() {
			get(b, u, page+"?partial=live", h, http.StatusNotModified)
		}
	})
}
