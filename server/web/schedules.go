package web

import (
	"net/http"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
)

// The schedules page, read only: each schedule with its next fire and its recent fires,
// linked to their runs. Steering is the CLI's and the API's (/v1/schedules).

const uiSchedulesPath = "/ui/schedules"

func init() { pages["schedules"] = parsePage("schedules.html") }

type schedulesView struct {
	uiPage
	Schedules []runner.View
}

func (u *UI) schedules(w http.ResponseWriter, r *http.Request) {
	rn := u.s.Schedules()
	if rn == nil {
		renderError(w, r, api.NewError(api.CodeUnsupported, "this process runs no schedules: they are run by wend serve"))
		return
	}
	renderPage(w, http.StatusOK, "schedules", "", schedulesView{uiPage: newUIPage(r, "Schedules"), Schedules: rn.List()})
}

// zoned shows a schedule's time in UTC, marked so, and in the schedule's own zone when it has
// one: "2026-03-09 07:00:00 UTC (2026-03-09 03:00:00 EDT)".
func zoned(t time.Time, zone string) string {
	out := t.UTC().Format("2006-01-02 15:04:05") + " UTC"
	loc, err := schedule.LoadZone(zone)
	if err != nil || loc == time.UTC {
		return out
	}
	return out + " (" + t.In(loc).Format("2006-01-02 15:04:05 MST") + ")"
}
