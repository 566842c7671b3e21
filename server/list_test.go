package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// listT0 is the start time of the first run a list test stores.
var listT0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// listFixture is a read-only server over a MemStore whose runs the test writes directly, so
// their start times, names and statuses are the test's to choose.
type listFixture struct {
	t     *testing.T
	store *history.MemStore
	hs    *httptest.Server
}

func newListFixture(t *testing.T) *listFixture {
	t.Helper()
	f := &listFixture{t: t, store: history.NewMemStore()}
	f.hs = httptest.NewServer(New(nil, f.store))
	t.Cleanup(f.hs.Close)
	return f
}

// put stores a run.
func (f *listFixture) put(workflowID, runID, name, status string, at time.Time) history.Run {
	f.t.Helper()
	u := storetest.Started(workflowID, runID, at)
	u.Run.Name, u.Run.Status = name, status
	if err := f.store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		f.t.Fatal(err)
	}
	return u.Run
}

// get sends GET /v1/runs?query and returns the status, the raw body and the page (on 200).
func (f *listFixture) get(query string) (int, string, api.RunPage) {
	f.t.Helper()
	resp, err := http.Get(f.hs.URL + "/v1/runs?" + query)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var p api.RunPage
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &p); err != nil {
			f.t.Fatalf("decode %s: %v", b, err)
		}
	}
	return resp.StatusCode, string(b), p
}

// page gets a page and fails the test unless it is a 200.
func (f *listFixture) page(query string) api.RunPage {
	f.t.Helper()
	code, body, p := f.get(query)
	if code != http.StatusOK {
		f.t.Fatalf("GET /v1/runs?%s: %d %s", query, code, body)
	}
	return p
}

func runIDs(runs []history.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.RunID
	}
	return out
}

// seedFilters stores six runs, one a minute from listT0 (r0 oldest, r5 newest):
//
//	r0 order-A1 billing   completed
//	r1 order-a2 billing   running
//	r2 Ship-1   shipping  failed
//	r3 ship-2   shipping  running
//	r4 other    billing   cancelled
//	r5 ORDER-b  shipping  running
func seedFilters(f *listFixture) {
	for i, r := range []struct{ wf, name, status string }{
		{"order-A1", "billing", history.StatusCompleted},
		{"order-a2", "billing", history.StatusRunning},
		{"Ship-1", "shipping", history.StatusFailed},
		{"ship-2", "shipping", history.StatusRunning},
		{"other", "billing", history.StatusCancelled},
		{"ORDER-b", "shipping", history.StatusRunning},
	} {
		f.put(r.wf, fmt.Sprintf("r%d", i), r.name, r.status, listT0.Add(time.Duration(i)*time.Minute))
	}
}

func TestListFilters(t *testing.T) {
	f := newListFixture(t)
	seedFilters(f)
	at := func(min int) string {
		return url.QueryEscape(listT0.Add(time.Duration(min) * time.Minute).Format(time.RFC3339))
	}
	tests := []struct {
		name, query string
		want        []string
	}{
		{"all, newest first", "", []string{"r5", "r4", "r3", "r2", "r1", "r0"}},
		{"status", "status=running", []string{"r5", "r3", "r1"}},
		{"workflow name", "name=billing", []string{"r4", "r1", "r0"}},
		{"name is exact", "name=bill", []string{}},
		{"workflow id is exact", "workflow_id=ship-2", []string{"r3"}},
		{"name and status", "name=shipping&status=running", []string{"r5", "r3"}},
		{"q in the workflow id, any case", "q=ORDER", []string{"r5", "r1", "r0"}},
		{"q lower case", "q=ship", []string{"r3", "r2"}},
		{"q in the run id", "q=R4", []string{"r4"}},
		{"q matches nothing", "q=zzz", []string{}},
		{"started_after is inclusive", "started_after=" + at(3), []string{"r5", "r4", "r3"}},
		{"started_before is exclusive", "started_before=" + at(2), []string{"r1", "r0"}},
		{"a range", "started_after=" + at(1) + "&started_before=" + at(4), []string{"r3", "r2", "r1"}},
		{"range, fractional seconds and an offset", "started_after=" + url.QueryEscape("2024-05-01T14:00:30.5+02:00"), []string{"r5", "r4", "r3", "r2", "r1"}},
		{"everything at once", "status=running&name=shipping&q=b&started_after=" + at(0) + "&started_before=" + at(6), []string{"r5"}},
		{"empty values are no filter", "status=&name=&q=&workflow_id=&started_after=&limit=&cursor=", []string{"r5", "r4", "r3", "r2", "r1", "r0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, p := f.get(tt.query)
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			if got := runIDs(p.Runs); !slices.Equal(got, tt.want) {
				t.Fatalf("runs %v, want %v", got, tt.want)
			}
			if p.NextCursor != "" || strings.Contains(body, "next_cursor") {
				t.Fatalf("a single page has a next cursor: %s", body)
			}
			if !strings.Contains(body, `"runs":[`) {
				t.Fatalf("runs not an array: %s", body)
			}
			// Match, which `wend list` uses on a database it opened, keeps the same runs.
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			q, err := ParseListQuery(v)
			if err != nil {
				t.Fatal(err)
			}
			all, err := f.store.Runs(history.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			kept := []string{}
			for _, r := range all {
				if q.Match(r) {
					kept = append(kept, r.RunID)
				}
			}
			if !slices.Equal(kept, tt.want) {
				t.Fatalf("Match keeps %v, want %v", kept, tt.want)
			}
		})
	}
}

func TestListLimits(t *testing.T) {
	f := newListFixture(t)
	for i := range 1005 {
		f.put(fmt.Sprintf("wf-%04d", i), fmt.Sprintf("run-%04d", i), "w", history.StatusRunning, listT0.Add(time.Duration(i)*time.Second))
	}
	p := f.page("")
	if len(p.Runs) != api.DefaultListLimit || p.Runs[0].RunID != "run-1004" || p.NextCursor == "" {
		t.Fatalf("default page: %d runs from %s, next %q", len(p.Runs), p.Runs[0].RunID, p.NextCursor)
	}
	p = f.page("limit=1000")
	if len(p.Runs) != api.MaxListLimit || p.NextCursor == "" {
		t.Fatalf("limit=1000: %d runs, next %q", len(p.Runs), p.NextCursor)
	}
	p = f.page("limit=1000&cursor=" + p.NextCursor)
	if got := runIDs(p.Runs); !slices.Equal(got, []string{"run-0004", "run-0003", "run-0002", "run-0001", "run-0000"}) || p.NextCursor != "" {
		t.Fatalf("last page: %v, next %q", got, p.NextCursor)
	}
	// Exactly limit matches: one page, no cursor to an empty one.
	if p := f.page("limit=5&started_before=" + url.QueryEscape(listT0.Add(5*time.Second).Format(time.RFC3339))); len(p.Runs) != 5 || p.NextCursor != "" {
		t.Fatalf("exactly limit runs: %v, next %q", runIDs(p.Runs), p.NextCursor)
	}
}

// collect pages through GET /v1/runs?query with limit n, calling between(page number) after
// each page, and returns every run id in the order the pages gave them.
func (f *listFixture) collect(query string, n int, between func(int)) []string {
	f.t.Helper()
	var got []string
	cursor := ""
	for pages := 1; ; pages++ {
		q := query + "&limit=" + fmt.Sprint(n)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := f.page(q)
		if len(p.Runs) > n {
			f.t.Fatalf("page %d has %d runs, limit %d", pages, len(p.Runs), n)
		}
		got = append(got, runIDs(p.Runs)...)
		if p.NextCursor == "" {
			return got
		}
		if len(p.Runs) != n {
			f.t.Fatalf("page %d has %d runs and a next cursor; want full pages before the last", pages, len(p.Runs))
		}
		if pages > 100 {
			f.t.Fatal("paging does not end")
		}
		cursor = p.NextCursor
		between(pages)
	}
}

func TestListPaginationStableUnderInserts(t *testing.T) {
	f := newListFixture(t)
	var want []string
	// 23 runs; three pairs share a start time, so the run id breaks the tie.
	for i := range 23 {
		at := listT0.Add(time.Duration(i/2*2) * time.Minute) // r00,r01 at 0; r02,r03 at 2; ...
		id := fmt.Sprintf("r%02d", i)
		f.put("wf-"+id, id, "w", history.StatusRunning, at)
		want = append(want, id)
	}
	slices.Reverse(want) // newest first; within a tie, the larger run id first
	inserted := 0
	got := f.collect("", 5, func(int) {
		// New runs start now: newer than every run listed, so no later page may show them
		// or shift by them.
		for range 3 {
			inserted++
			id := fmt.Sprintf("new-%02d", inserted)
			f.put("wf-"+id, id, "w", history.StatusRunning, listT0.Add(time.Hour+time.Duration(inserted)*time.Second))
		}
	})
	if !slices.Equal(got, want) {
		t.Fatalf("pages gave\n%v\nwant (no duplicates, no gaps)\n%v", got, want)
	}
	if inserted == 0 {
		t.Fatal("no page boundary: the test inserted nothing")
	}
	// A fresh listing sees the new runs first.
	if p := f.page("limit=1"); p.Runs[0].RunID != fmt.Sprintf("new-%02d", inserted) {
		t.Fatalf("newest after the inserts: %v", runIDs(p.Runs))
	}
}

func TestListPaginationWithFilters(t *testing.T) {
	f := newListFixture(t)
	var want []string
	for i := range 40 {
		id := fmt.Sprintf("r%02d", i)
		name := "even"
		if i%2 == 1 {
			name = "odd"
		}
		f.put("wf-"+id, id, name, history.StatusRunning, listT0.Add(time.Duration(i)*time.Minute))
		if name == "odd" && i >= 10 {
			want = append(want, id)
		}
	}
	slices.Reverse(want)
	after := url.QueryEscape(listT0.Add(10 * time.Minute).Format(time.RFC3339))
	n := 0
	got := f.collect("name=odd&started_after="+after, 4, func(page int) {
		// Inserts of the same name, newer than everything: invisible to the pages after.
		n++
		id := fmt.Sprintf("z%02d", n)
		f.put("wf-"+id, id, "odd", history.StatusRunning, time.Now())
	})
	if !slices.Equal(got, want) {
		t.Fatalf("filtered pages gave %v, want %v", got, want)
	}
}

func TestListBadInput(t *testing.T) {
	f := newListFixture(t)
	seedFilters(f)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct{ name, query, fragment string }{
		{"unknown parameter", "workflow=billing", `unknown parameter "workflow"`},
		{"repeated parameter", "status=running&status=failed", `parameter "status" given 2 times`},
		{"bad status", "status=done", `unknown status "done"`},
		{"limit zero", "limit=0", `limit="0" must be a whole number from 1 to 1000`},
		{"limit negative", "limit=-5", `limit="-5"`},
		{"limit not a number", "limit=ten", `limit="ten"`},
		{"limit too large", "limit=1001", `from 1 to 1000`},
		{"started_after not a time", "started_after=yesterday", `started_after="yesterday" is not an RFC 3339 time`},
		{"started_before a date only", "started_before=2024-05-01", `started_before="2024-05-01" is not an RFC 3339 time`},
		{"started_after without a zone", "started_after=2024-05-01T12:00:00", "is not an RFC 3339 time"},
		{"empty range", "started_after=2024-05-02T00:00:00Z&started_before=2024-05-01T00:00:00Z", "must be earlier than started_before"},
		{"zero-width range", "started_after=2024-05-01T00:00:00Z&started_before=2024-05-01T00:00:00Z", "must be earlier than started_before"},
		{"cursor not base64", "cursor=%21%21%21", "is not one this server gave"},
		{"cursor of another form", "cursor=" + enc("v9|2024-05-01T00:00:00Z|r1"), "is not one this server gave"},
		{"cursor with a bad time", "cursor=" + enc("c1|noon|r1"), "is not one this server gave"},
		{"cursor without a run id", "cursor=" + enc("c1|2024-05-01T00:00:00Z|"), "is not one this server gave"},
		{"q too long", "q=" + strings.Repeat("x", 257), "more than 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := f.get(tt.query)
			wantError(t, code, body, http.StatusBadRequest, api.CodeBadRequest, tt.fragment)
			if !strings.HasPrefix(body, `{"error":{"code":"bad_request","message":"list runs: `) {
				t.Fatalf("not the stable error format: %s", body)
			}
		})
	}
}

func TestListQueryValuesRoundTrip(t *testing.T) {
	q := api.ListQuery{Status: "running", WorkflowID: "w/1", Name: "n", Q: "a b", Limit: 7,
		StartedAfter: listT0, StartedBefore: listT0.Add(90 * time.Second), Cursor: encodeCursor(listT0, "r1")}
	back, err := ParseListQuery(q.Values())
	if err != nil {
		t.Fatal(err)
	}
	if back.Status != q.Status || back.WorkflowID != q.WorkflowID || back.Name != q.Name || back.Q != q.Q ||
		back.Limit != q.Limit || !back.StartedAfter.Equal(q.StartedAfter) || !back.StartedBefore.Equal(q.StartedBefore) || back.Cursor != q.Cursor {
		t.Fatalf("round trip: %+v\nwant %+v", back, q)
	}
	if v := (api.ListQuery{}).Values(); len(v) != 0 {
		t.Fatalf("zero query has values: %v", v)
	}
}

// A cursor names a position with nanoseconds intact, so runs a nanosecond apart page apart.
func TestListCursorNanoseconds(t *testing.T) {
	f := newListFixture(t)
	f.put("a", "ra", "w", history.StatusRunning, listT0.Add(1))
	f.put("b", "rb", "w", history.StatusRunning, listT0.Add(2))
	f.put("c", "rc", "w", history.StatusRunning, listT0.Add(3))
	if got := f.collect("", 1, func(int) {}); !slices.Equal(got, []string{"rc", "rb", "ra"}) {
		t.Fatalf("pages: %v", got)
	}
}
