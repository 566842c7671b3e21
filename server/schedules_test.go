package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/server/internal/servertest"
)

// TestSchedulesAPI: /v1/schedules answers 501 where no runner is set, then lists, shows,
// pauses, triggers, backfills and deletes over one, with 400 and 404 for bad requests.
func TestSchedulesAPI(t *testing.T) {
	store := history.NewMemStore()
	f := newFixture(t, store)
	code, body := f.do("GET", "/v1/schedules", "", nil)
	wantError(t, code, body, http.StatusNotImplemented, api.CodeUnsupported, "run by wend serve")

	rn := servertest.NightlyRunner(t, store, f.eng, time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC))
	f.srv.SetSchedules(rn)

	var list struct{ Schedules []runner.View }
	if code, body := f.do("GET", "/v1/schedules", "", &list); code != 200 || len(list.Schedules) != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	if v := list.Schedules[0]; v.ID != "nightly" || v.NextFire != time.Date(2026, 3, 9, 7, 0, 0, 0, time.UTC) || !v.Declared {
		t.Fatalf("listed %+v; want nightly next firing at 3:00 EDT on March 9th", v)
	}
	code, body = f.do("GET", "/v1/schedules/weekly", "", nil)
	wantError(t, code, body, http.StatusNotFound, api.CodeNotFound, `schedule "weekly"`)
	code, body = f.do("POST", "/v1/schedules/nightly/trigger", `{"overlap":"queue"}`, nil)
	wantError(t, code, body, http.StatusBadRequest, api.CodeBadRequest, `unknown overlap "queue"`)
	code, body = f.do("POST", "/v1/schedules/nightly/backfill", `{"from":"2026-03-02T00:00:00Z","to":"2026-03-01T00:00:00Z"}`, nil)
	wantError(t, code, body, http.StatusBadRequest, api.CodeBadRequest, "FROM must be before TO")
	code, body = f.do("POST", "/v1/schedules/nightly/backfill", `{}`, nil)
	wantError(t, code, body, http.StatusBadRequest, api.CodeBadRequest, "needs from and to")

	var paused struct{ Schedule runner.View }
	if code, body := f.do("POST", "/v1/schedules/nightly/pause", `{"note":"audit"}`, &paused); code != 200 || !paused.Schedule.Paused || paused.Schedule.State.Note != "audit" {
		t.Fatalf("pause: %d %s", code, body)
	}
	var fired struct {
		Fire struct {
			WorkflowID string `json:"workflow_id"`
		}
	}
	if code, body := f.do("POST", "/v1/schedules/nightly/trigger", `{}`, &fired); code != 200 || fired.Fire.WorkflowID != "nightly-2026-03-08T12:00:00Z" {
		t.Fatalf("trigger: %d %s", code, body)
	}
	var filled struct{ Fires int }
	if code, body := f.do("POST", "/v1/schedules/nightly/backfill", `{"from":"2026-03-01T00:00:00Z","to":"2026-03-04T00:00:00Z","overlap":"allow_all"}`, &filled); code != 200 || filled.Fires != 3 {
		t.Fatalf("backfill: %d %s", code, body)
	}
	if err := rn.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"nightly-2026-03-08T12:00:00Z", "nightly-2026-03-01T08:00:00Z", "nightly-2026-03-03T08:00:00Z"} {
		if runs, _ := store.Runs(history.RunFilter{WorkflowID: id}); len(runs) != 1 {
			t.Fatalf("run %s: %d runs, want 1", id, len(runs))
		}
	}

	if code, body := f.do("DELETE", "/v1/schedules/nightly", "", nil); code != 200 {
		t.Fatalf("delete: %d %s", code, body)
	}
	code, body = f.do("GET", "/v1/schedules/nightly", "", nil)
	wantError(t, code, body, http.StatusNotFound, api.CodeNotFound, "no such schedule")
}
