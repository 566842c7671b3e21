package web

import (
	"net/http"

	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/server"
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
		renderError(w, r, server.NewError(server.CodeUnsupported, "this process runs no schedules: they are run by wend serve"))
		return
	}
	renderPage(w, http.StatusOK, "schedules", "", schedulesView{uiPage: newUIPage(r, "Schedules"), Schedules: rn.List()})
}
