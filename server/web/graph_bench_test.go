package web

import (
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
	"github.com/wendflow/wend/testkit/enginetest"
)

// bigRun is a run of a 500-step workflow (497 activities, then a for_each of two) with
// about 100,000 events, most of them the loop's items; the last item is still running.
func bigRun(tb testing.TB) (history.Run, []history.Event) {
	tb.Helper()
	items := make([]string, (100_000-1-497*3-2)/6+1)
	for i := range items {
		items[i] = itemCompleted
	}
	items[len(items)-1] = itemRunning
	return genRun(497, items)
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
// polled with its version while the run has not changed (304); commit is the page after each
// commit of one more event (the kept fold extended by it).
func BenchmarkRunPage(b *testing.B) {
	run, evs := bigRun(b)
	store := history.NewMemStore()
	run.SpecFile, run.StartedAt = "big.wend.yaml", evs[0].Time
	if err := store.Commit(b.Context(), history.Commit{Runs: []history.RunUpdate{{Run: run, Events: evs}}}); err != nil {
		b.Fatal(err)
	}
	eng := enginetest.New(b, engine.Options{Store: store, Activities: servertest.Acts{}})
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
	b.Run("commit", func(b *testing.B) {
		// The page after each commit of one event: the kept fold extended by it.
		u := New(srv)
		get(b, u, page, nil, 200)
		last := evs[len(evs)-1]
		size := 0
		for b.Loop() {
			last.Seq, last.Time, last.Type, last.Data = last.Seq+1, last.Time.Add(time.Millisecond), history.ActivityHeartbeatRecorded, nil
			run.LastSeq = last.Seq
			if err := store.Commit(b.Context(), history.Commit{Runs: []history.RunUpdate{{Run: run, Events: []history.Event{last}}}}); err != nil {
				b.Fatal(err)
			}
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
