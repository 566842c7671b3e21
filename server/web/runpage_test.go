package web

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
)

// pageOver serves one GET of a run's page from u.
func pageOver(t *testing.T, u *UI, path string, h http.Header) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	for k, v := range h {
		req.Header[k] = v
	}
	u.ServeHTTP(w, req)
	return w
}

// mixedItems are a loop's items in every state an item ends in, in an order that is not
// sorted by state.
var mixedItems = []string{itemCompleted, itemFailed, itemCompleted, itemRunning, itemRetrying, itemCancelled, itemCompleted, itemFailed}

// pageCases are generated runs whose pages the fast path (a fold kept across versions, the
// pages of the step table, timeline and activity cards) must show as the full fold does.
var pageCases = []struct {
	name  string
	plain int
	items []string
	// queries are the page's variants checked, beside the plain page.
	queries []string
}{
	{"a loop of mixed items", 3, mixedItems, []string{"expand=steps%5B3%5D.steps%5B0%5D", "step=steps%5B3%5D", "events=compact"}},
	{"more cards than a page", 70, mixedItems, []string{"cpage=2", "cpage=9", "expand=steps%5B70%5D.steps%5B0%5D&cpage=2", "epage=2"}},
	{"more steps than a page", 130, append(slices.Repeat([]string{itemCompleted}, 60), mixedItems...),
		[]string{"tpage=2", "tpage=0", "cpage=3", "expand=steps%5B130%5D.steps%5B0%5D&apage=2&cpage=3", "step=steps%5B130%5D&spage=2"}},
	{"a loop not begun", 5, nil, []string{"step=steps%5B5%5D"}},
}

// A UI that keeps a run's fold across its versions serves, at every version, the very page a
// UI that folds the run afresh serves: the kept fold is never stale, whichever page variant
// read it first.
func TestRunPageKeptFoldIsTheFreshFold(t *testing.T) {
	for _, c := range pageCases {
		t.Run(c.name, func(t *testing.T) {
			run, evs := genRun(c.plain, c.items)
			store := history.NewMemStore()
			srv := server.New(nil, store)
			kept := New(srv)
			queries := append([]string{""}, c.queries...)
			// The run is committed in five parts; each version is read through every variant.
			cuts := []int{1, len(evs) / 4, len(evs) / 2, len(evs) - 1, len(evs)}
			from := 0
			for _, cut := range cuts {
				r := run
				r.LastSeq = uint64(cut)
				if err := store.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{{Run: r, Events: evs[from:cut]}}}); err != nil {
					t.Fatal(err)
				}
				from = cut
				for _, q := range queries {
					for _, frag := range []string{"", "partial=live"} {
						path := "/ui/runs/" + run.RunID + "?" + strings.Trim(q+"&"+frag, "&")
						got := pageOver(t, kept, path, nil)
						want := pageOver(t, New(srv), path, nil)
						if got.Code != 200 || got.Body.String() != want.Body.String() {
							t.Fatalf("at seq %d, %s: the kept fold's page (%d, %d bytes) differs from a fresh fold's (%d, %d bytes)",
								cut, path, got.Code, got.Body.Len(), want.Code, want.Body.Len())
						}
					}
				}
			}
		})
	}
}

var (
	stepRowRe  = regexp.MustCompile(`<tr class="step" data-path="([^"]*)" data-status="([^"]*)">`)
	ganttRowRe = regexp.MustCompile(`<tr class="gantt-row" data-path="([^"]*)" data-status="([^"]*)">`)
	cardRe     = regexp.MustCompile(`<div class="card activity" data-exec="([^"]*)">`)
	countRe    = regexp.MustCompile(`data-count="([^"]*)">[^<]* (\d+)<`)
	svgRe      = regexp.MustCompile(`(?s)<svg[^>]*class="graph".*?</svg>`)
)

// The page shows what the full fold of the run says: the drawing the full fold draws (each
// step's state, the loop's items by state), every step row and timeline row across the
// pages, the loop's activities counted by status, and every activity card across the pages,
// in the order of the history.
func TestRunPageShowsTheFullFold(t *testing.T) {
	for _, c := range pageCases {
		t.Run(c.name, func(t *testing.T) {
			run, evs := genRun(c.plain, c.items)
			store := history.NewMemStore()
			if err := store.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{{Run: run, Events: evs}}}); err != nil {
				t.Fatal(err)
			}
			u := New(server.New(nil, store))
			view, err := runview.Fold(run, evs)
			if err != nil {
				t.Fatal(err)
			}
			base := "/ui/runs/" + run.RunID
			body := pageOver(t, u, base, nil).Body.String()

			// The drawing is the full fold's, byte for byte.
			ref := &runView{URL: base, params: url.Values{}}
			ref.Steps, ref.Waits = view.Steps(), view.Waits()
			if got, want := svgRe.FindString(body), strings.TrimSpace(string(ref.runGraph(view, evs))); got != want {
				t.Errorf("the page's drawing differs from the full fold's:\n got %.300s\nwant %.300s", got, want)
			}

			// A loop's items are drawn by state: every state once among these (retrying runs).
			if len(c.items) == len(mixedItems) && !strings.Contains(body, "8 items: 2 failed, 2 running,&#xA;1 cancelled, 3 completed") {
				t.Errorf("the loop's box does not count its items by state: %.400s", body[strings.Index(body, `data-kind="for_each"`):])
			}

			// Every step, in order, with its status, in the table and the timeline.
			var rows, gantts [][2]string
			for p := 1; p <= 1+len(ref.Steps)/rowPageSize; p++ {
				b := pageOver(t, u, fmt.Sprintf("%s?tpage=%d", base, p), nil).Body.String()
				for _, m := range stepRowRe.FindAllStringSubmatch(b, -1) {
					rows = append(rows, [2]string{m[1], m[2]})
				}
				for _, m := range ganttRowRe.FindAllStringSubmatch(b, -1) {
					gantts = append(gantts, [2]string{m[1], m[2]})
				}
			}
			var want [][2]string
			for _, s := range ref.Steps {
				want = append(want, [2]string{s.Path, s.Status})
			}
			if !slices.Equal(rows, want) {
				t.Errorf("step rows across the pages:\n got %v\nwant %v", rows, want)
			}
			if !slices.Equal(gantts, want) {
				t.Errorf("timeline rows across the pages:\n got %v\nwant %v", gantts, want)
			}

			// The loop's activities by status, counted here from the fold.
			loopCounts := map[string]int{}
			var cards []string
			for _, a := range view.Activities {
				if strings.Contains(a.Step, "@") {
					loopCounts[a.Status]++
				} else {
					cards = append(cards, a.ActivityExecutionID)
				}
			}
			// Every card outside the loop, in order, and the loop's counts, across the card pages.
			shown := map[string]int{}
			var got []string
			entries := len(cards)
			if len(loopCounts) > 0 {
				entries += 2 // the loop's two steps, a group each
			}
			for p := 1; p <= (entries+cardPageSize-1)/cardPageSize; p++ {
				b := pageOver(t, u, fmt.Sprintf("%s?cpage=%d", base, p), nil).Body.String()
				i := strings.Index(b, `id="activities"`)
				for _, m := range cardRe.FindAllStringSubmatch(b[i:], -1) {
					got = append(got, m[1])
				}
				for _, m := range countRe.FindAllStringSubmatch(b[i:], -1) {
					n, _ := strconv.Atoi(m[2])
					shown[m[1]] += n
				}
			}
			if !maps.Equal(shown, loopCounts) {
				t.Errorf("the loop's activities by status shown as %v, the fold has %v", shown, loopCounts)
			}
			if !slices.Equal(got, cards) {
				t.Errorf("activity cards across the pages: %d, want %d\n got %v\nwant %v", len(got), len(cards), got, cards)
			}
		})
	}
}

// Pages read while the run's commits land (each read may fold, extend or reuse a kept fold,
// and draw) race with nothing (go test -race), and the last version's page is then a fresh
// fold's.
func TestRunPageReadsWhileCommitsLand(t *testing.T) {
	run, evs := genRun(20, mixedItems)
	store := history.NewMemStore()
	srv := server.New(nil, store)
	kept := New(srv)
	commit := func(from, to int) {
		r := run
		r.LastSeq = uint64(to)
		if err := store.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{{Run: r, Events: evs[from:to]}}}); err != nil {
			t.Error(err)
		}
	}
	commit(0, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, q := range []string{"", "?partial=live", "?expand=steps%5B20%5D.steps%5B0%5D", "?step=steps%5B20%5D&partial=live"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				w := httptest.NewRecorder()
				kept.ServeHTTP(w, httptest.NewRequest("GET", "/ui/runs/"+run.RunID+q, nil))
				if w.Code != 200 {
					t.Errorf("%s: %d", q, w.Code)
					return
				}
			}
		}()
	}
	for from := 1; from < len(evs); from += 7 {
		commit(from, min(from+7, len(evs)))
	}
	close(done)
	wg.Wait()
	for _, q := range []string{"", "?partial=live", "?expand=steps%5B20%5D.steps%5B0%5D"} {
		path := "/ui/runs/" + run.RunID + q
		if got, want := pageOver(t, kept, path, nil).Body.String(), pageOver(t, New(srv), path, nil).Body.String(); got != want {
			t.Errorf("%s: the page read during the commits differs from a fresh fold's", path)
		}
	}
}
