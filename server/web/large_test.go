package web

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/interpreter/engine"
)

// manySpec runs one activity per item, as many as its input lists.
const manySpec = `wend: v1
name: many
plugins: {demo: ./demo}
steps:
  - id: pack
    for_each: "${{ input.items }}"
    concurrency: 8
    steps:
      - id: label
        activity: demo.echo
        with: {item: "${{ item }}"}
  - id: ship
    activity: demo.echo
    with: {done: true}
`

// startMany starts a run of manySpec over n items under id and waits for it to close.
func startMany(t *testing.T, f *webFixture, id string, n int) {
	t.Helper()
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	in, _ := json.Marshal(map[string]any{"items": items})
	if _, err := f.srv.Start(context.Background(), engine.StartRequest{WorkflowID: id,
		SpecFile: filepath.Join(f.dir, id+".wend.yaml"), Source: manySpec, Input: in}); err != nil {
		t.Fatal(err)
	}
	f.settle(id, closed)
}

// TestUILargeRunPageBounded: a 300-item for_each's page was 431 KB with an activity
// card per item; it collapses the loop's activities into a summary row with counts and pages
// the events, so the page stays under a fixed size whatever the number of items.
func TestUILargeRunPageBounded(t *testing.T) {
	f := newWebFixture(t)
	startMany(t, f, "big", 300)
	get := func(path string) string {
		t.Helper()
		code, _, body := f.send(req{Method: "GET", Path: path, Session: true})
		if code != 200 {
			t.Fatalf("%s: %d %.300s", path, code, body)
		}
		return body
	}
	// The bounds are the page's own (100 events, 50 cards of an expanded loop), not the run's.
	const limit, expandedLimit = 48 << 10, 96 << 10
	expand := "/ui/runs/big?expand=" + url.QueryEscape("steps[0].steps[0]")
	tests := []struct {
		name, path string
		cards      int      // activity cards
		has        []string // substrings the page holds
	}{
		{"collapsed", "/ui/runs/big", 1, []string{`data-group="steps[0].steps[0]"`, `data-count="completed">completed 300<`,
			`100 of 604 events (seq 505–604) · page 1 of 7`, `class="expand"`}},
		{"expanded", expand, 51, []string{"page 1 of 6", `class="next"`, `class="collapse"`,
			`data-live="/ui/runs/` /* checked below */}},
		{"expanded last page", expand + "&apage=6", 51, []string{"page 6 of 6"}},
		{"oldest events", "/ui/runs/big?epage=7", 1, []string{`4 of 604 events (seq 1–4) · page 7 of 7`, `class="newer"`}},
		{"compact events", "/ui/runs/big?events=compact", 1, []string{`id="event-lines"`, `id="events-full"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := get(tt.path)
			if lim := map[bool]int{false: limit, true: expandedLimit}[strings.Contains(tt.path, "expand")]; len(body) > lim {
				t.Errorf("%d bytes, want at most %d", len(body), lim)
			}
			if n := strings.Count(body, `class="card activity"`); n != tt.cards {
				t.Errorf("%d activity cards, want %d", n, tt.cards)
			}
			for _, h := range tt.has {
				if !strings.Contains(body, h) {
					t.Errorf("lacks %q", h)
				}
			}
		})
	}
	// The compact view is one line per event, and the live refresh keeps the page's view.
	body := get("/ui/runs/big?events=compact&expand=steps%5b0%5d.steps%5b0%5d")
	lines := body[strings.Index(body, `id="event-lines"`):]
	lines = lines[:strings.Index(lines, "</ol>")]
	if n := strings.Count(lines, "<li>"); n != 100 || strings.Contains(lines, "<code>") {
		t.Errorf("compact view: %d lines (want 100), data shown: %v", n, strings.Contains(lines, "<code>"))
	}
	if !strings.Contains(body, `data-live="/ui/runs/`) || !strings.Contains(body, `events=compact&amp;expand=steps%5B0%5D.steps%5B0%5D&amp;partial=live"`) {
		t.Errorf("the live URL loses the view: %s", body[strings.Index(body, "data-live"):][:200])
	}
}
