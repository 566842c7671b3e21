package server

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestPurgeAPI: the filter reaches the store as history.PurgeFilter.Match, bad filters and
// oversized requests are refused before it, and a store that cannot purge says so.
func TestPurgeAPI(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	st := &storetest.Purging{MemStore: history.NewMemStore(), Candidates: []history.Run{
		{RunID: "a", Name: "nightly", Status: history.StatusCompleted, ClosedAt: t0},
		{RunID: "b", Name: "nightly", Status: history.StatusFailed, ClosedAt: t0.Add(48 * time.Hour)},
		{RunID: "c", Name: "nightly", Status: history.StatusRunning},
	}}
	many := `{"run_ids":["x"` + strings.Repeat(`,"x"`, api.MaxPurgeIDs) + `]}`
	for _, c := range []struct {
		name, path, body string
		store            history.Store
		status           int
		want             string // in the answer
	}{
		{"select by time", "/v1/purge/select", `{"closed_before":"2026-05-02T00:00:00Z"}`, st, 200, `"run_id":"a"`},
		{"select by status", "/v1/purge/select", `{"status":"failed","workflow":"nightly"}`, st, 200, `"run_id":"b"`},
		{"select none", "/v1/purge/select", `{"workflow":"other"}`, st, 200, `{"runs":[]}`},
		{"select open", "/v1/purge/select", `{"status":"running"}`, st, 400, "an open run is never purged"},
		{"select unknown status", "/v1/purge/select", `{"status":"done"}`, st, 400, `unknown status \"done\"`},
		{"select typo", "/v1/purge/select", `{"workfow":"x"}`, st, 400, "unknown field"},
		{"purge", "/v1/purge", `{"run_ids":["b","gone"]}`, st, 200, `"run_id":"b"`},
		{"purge too many", "/v1/purge", many, st, 400, "at most 1000"},
		{"no purger", "/v1/purge/select", `{}`, history.NewMemStore(), 501, "cannot select runs to purge"},
		{"no purger purge", "/v1/purge", `{"run_ids":[]}`, history.NewMemStore(), 501, "cannot purge runs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			New(nil, c.store).ServeHTTP(w, httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(c.body)))
			if w.Code != c.status || !strings.Contains(w.Body.String(), c.want) {
				t.Errorf("%d %s, want %d with %s", w.Code, w.Body, c.status, c.want)
			}
			if c.status == 200 && strings.Contains(w.Body.String(), `"run_id":"c"`) {
				t.Errorf("an open run selected: %s", w.Body)
			}
		})
	}
	if len(st.Purged) != 1 || !slices.Equal(st.Purged[0], []string{"b", "gone"}) {
		t.Errorf("purge calls %v", st.Purged)
	}
}
