package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server/internal/servertest"
)

// TestUISchedulesPage: the read-only schedules page lists each schedule with its next fire
// and its recent fires linked to their runs, escaped like every page.
func TestUISchedulesPage(t *testing.T) {
	store := history.NewMemStore()
	eng, srv := apptest.Over(t, store, nil)
	hs := httptest.NewServer(New(srv))
	t.Cleanup(hs.Close)
	get := func() (int, string) {
		resp, err := http.Get(hs.URL + "/ui/schedules")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(); code != http.StatusNotImplemented {
		t.Fatalf("without a runner: %d, want 501", code)
	}
	rn := servertest.NightlyRunner(t, store, eng, time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC))
	srv.SetSchedules(rn)
	if _, err := rn.Trigger("nightly", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rn.Pause("nightly", "<b>audit</b>"); err != nil {
		t.Fatal(err)
	}
	code, body := get()
	for _, want := range []string{`data-schedule="nightly"`, `<code>0 3 * * *</code> America/New_York`, `>paused</span>`,
		`href="/ui/runs/nightly-2026-03-08T12:00:00Z"`, `note: &lt;b&gt;audit&lt;/b&gt;`,
		`<a class="graph-link" href="/ui/workflows/report#graph-title">graph</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if code != 200 || strings.Contains(body, "<b>audit") {
		t.Fatalf("%d\n%s", code, body)
	}
	// Times are marked UTC and shown in the schedule's zone too (03:00 New York is 07:00 UTC
	// on the day daylight saving time starts).
	if _, err := rn.Resume("nightly", ""); err != nil {
		t.Fatal(err)
	}
	_, body = get()
	for _, want := range []string{`<span class="next-fire">2026-03-09 07:00:00 UTC (2026-03-09 03:00:00 EDT)</span>`,
		`<td>2026-03-08 12:00:00 UTC (2026-03-08 08:00:00 EDT)</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}
