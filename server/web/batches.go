package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/server"
)

// Batches from the runs list: the runs ticked there, cancelled, terminated or retried by a
// batch of wend serve's (package batch), whose page shows its progress. Over TCP the guard
// has checked the session and its CSRF value, as for the run buttons.

const uiBatchesPath = "/ui/batches"

func init() {
	pages["batch"] = parsePage("batch.html")
	pages["batches"] = parsePage("batches.html")
}

// batchActions are what the runs list offers to do to the runs ticked.
var batchActions = []string{api.BatchOpCancel, api.BatchOpTerminate, api.BatchOpRetry}

func (u *UI) batchRoutes(m *server.Router) {
	m.HandleFunc("POST "+uiBatchesPath, server.AccessAct, u.createBatch)
	m.HandleFunc("GET "+uiBatchesPath+"/{id}", server.AccessRead, u.batch)
	m.HandleFunc("GET "+uiBatchesPath, server.AccessRead, u.batches)
}

type batchesView struct {
	uiPage
	Batches []api.Batch
}

// batches is GET /ui/batches: every batch kept, newest first, each linked to its page.
func (u *UI) batches(w http.ResponseWriter, r *http.Request) {
	bs := u.s.Batches()
	if bs == nil {
		renderError(w, r, api.NewError(api.CodeUnsupported, "this process runs no batches: they are run by wend serve"))
		return
	}
	renderPage(w, http.StatusOK, "batches", "", batchesView{uiPage: newUIPage(r, "Batches"), Batches: bs.List()})
}

type batchView struct {
	uiPage
	Batch   api.Batch
	Acted   int // done + failed + skipped
	LiveURL string
	Version string
}

// createBatch is POST /ui/batches: action (cancel, terminate, retry), run (each run ticked),
// reason. Success redirects to the batch's page.
func (u *UI) createBatch(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, server.MaxFormBody)
	if err := r.ParseForm(); err != nil {
		renderError(w, r, api.NewError(api.CodeBadRequest, "unreadable form: "+err.Error()))
		return
	}
	bs := u.s.Batches()
	if bs == nil {
		renderError(w, r, api.NewError(api.CodeUnsupported, "this process runs no batches: they are run by wend serve"))
		return
	}
	runs := r.PostForm["run"]
	if len(runs) == 0 {
		renderError(w, r, api.NewError(api.CodeBadRequest, "no run ticked: tick the runs to act on in the list"))
		return
	}
	act := r.PostForm.Get("action")
	req := api.BatchRequest{Operation: act, RunIDs: runs, Reason: strings.TrimSpace(r.PostForm.Get("reason"))}
	if act == api.BatchOpRetry {
		req.Reason = "" // a retry records no reason
	} else if act != api.BatchOpCancel && act != api.BatchOpTerminate {
		renderError(w, r, api.NewError(api.CodeBadRequest, fmt.Sprintf("no batch action %q (want cancel, terminate or retry)", act)))
		return
	}
	bt, _, err := bs.Create(req)
	if err != nil {
		renderError(w, r, err)
		return
	}
	http.Redirect(w, r, uiBatchesPath+"/"+url.PathEscape(bt.ID), http.StatusSeeOther)
}

// batch is GET /ui/batches/{id}: the batch's progress; ?partial=live answers the live part.
func (u *UI) batch(w http.ResponseWriter, r *http.Request) {
	bs := u.s.Batches()
	if bs == nil {
		renderError(w, r, api.NewError(api.CodeUnsupported, "this process runs no batches: they are run by wend serve"))
		return
	}
	id := r.PathValue("id")
	bt, err := bs.Get(id)
	if err != nil {
		renderError(w, r, err)
		return
	}
	acted := bt.Done + bt.Failed + bt.Skipped
	v := batchView{uiPage: newUIPage(r, "Batch "+bt.ID), Batch: bt, Acted: acted,
		LiveURL: uiBatchesPath + "/" + url.PathEscape(id) + "?partial=live", Version: fmt.Sprintf("%s-%d", bt.Status, acted)}
	if fragmentOf(r) == "live" {
		renderPage(w, http.StatusOK, "batch", "live", v)
		return
	}
	renderPage(w, http.StatusOK, "batch", "", v)
}
