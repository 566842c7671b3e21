package web

import (
	"context"
	"fmt"
	"html"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

var (
	listedRun = regexp.MustCompile(`data-workflow-id="(wf\d+)"`)
	olderLink = regexp.MustCompile(`<a class="older" href="([^"]+)">`)
)

// The runs page over a store with more runs than a page shows the newest page, and its older
// link, a cursor, goes on from there without repeating or skipping a run, filters kept, until
// the oldest run; every page past the first links back to the newest.
func TestUIListPagesByCursor(t *testing.T) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "wend.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	const n = 2*listPageSize + 7
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	var c history.Commit
	var all, failedAlpha []string // newest first
	for i := n - 1; i >= 0; i-- {
		u := storetest.Started(fmt.Sprintf("wf%05d", i), fmt.Sprintf("r%05d", i), t0.Add(time.Duration(i)*time.Second))
		u.Run.Name = []string{"alpha", "beta"}[i%2]
		u.Run.Status = history.StatusCompleted
		if i%3 == 0 {
			u.Run.Status = history.StatusFailed
		}
		c.Runs = append(c.Runs, u)
		all = append(all, u.Run.WorkflowID)
		if u.Run.Name == "alpha" && u.Run.Status == history.StatusFailed {
			failedAlpha = append(failedAlpha, u.Run.WorkflowID)
		}
	}
	if err := bolt.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	f := newWebFixtureOver(t, bolt)
	follow := func(t *testing.T, path string) (ids []string, pages []string) {
		for path != "" && len(pages) <= n {
			code, _, body := f.send(req{Method: "GET", Path: path, ReadSession: true})
			if code != 200 {
				t.Fatalf("GET %s: %d %.300s", path, code, body)
			}
			pages = append(pages, body)
			for _, m := range listedRun.FindAllStringSubmatch(body, -1) {
				ids = append(ids, m[1])
			}
			path = ""
			if m := olderLink.FindStringSubmatch(body); m != nil {
				path = html.UnescapeString(m[1])
			}
		}
		return ids, pages
	}
	tests := []struct {
		name, path string
		want       []string
	}{
		{"every run", "/ui/runs", all},
		{"status and workflow", "/ui/runs?status=failed&workflow=alpha", failedAlpha},
		{"filter box", "/ui/runs?where=" + strings.ReplaceAll("status = failed and name = alpha", " ", "+"), failedAlpha},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, pages := follow(t, tt.path)
			if !slices.Equal(ids, tt.want) {
				t.Fatalf("listed %d runs %v,\nwant %d %v", len(ids), ids, len(tt.want), tt.want)
			}
			if wantPages := max(1, (len(tt.want)+listPageSize-1)/listPageSize); len(pages) != wantPages {
				t.Errorf("%d pages, want %d", len(pages), wantPages)
			}
			for i, body := range pages {
				if got := strings.Contains(body, `class="newest"`); got != (i > 0) {
					t.Errorf("page %d: newest link %v", i+1, got)
				}
				if !strings.Contains(body, fmt.Sprintf("%d runs · page %d", n, i+1)) {
					t.Errorf("page %d does not say so: %.200s", i+1, body[strings.Index(body, `class="pager`):])
				}
			}
		})
	}
	// The first page shows the counts kept at commit, of every run, whatever the page holds.
	_, _, body := f.send(req{Method: "GET", Path: "/ui/runs?status=failed&partial=live", ReadSession: true})
	if want := fmt.Sprintf(`<span class="badge s-failed">failed</span> <b>%d</b>`, (n+2)/3); !strings.Contains(body, want) {
		t.Errorf("counts: want %s in %.600s", want, body)
	}
	// A cursor this server did not give is refused, not read as an offset.
	if code, _, body := f.send(req{Method: "GET", Path: "/ui/runs?cursor=bogus", ReadSession: true}); code != 400 {
		t.Errorf("bad cursor: %d %.300s", code, body)
	}
}
