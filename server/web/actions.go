package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/server"
)

// action is POST /ui/runs/{id}/{action}: the operator buttons. Over TCP the guard has
// already checked the token or the session with its same-origin and CSRF checks. Success
// redirects to the run's page (303, so a reload does not post again) with a fixed
// confirmation; failure shows the page again with the reason and the error's status.
func (u *UI) action(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, server.MaxFormBody)
	if err := r.ParseForm(); err != nil {
		u.actionFailed(w, r, api.NewError(api.CodeBadRequest, "unreadable form: "+err.Error()))
		return
	}
	id, act := r.PathValue("id"), r.PathValue("action")
	ctx := r.Context()
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	target := id
	var err error
	switch act {
	case "signal":
		name := strings.TrimSpace(r.PostForm.Get("name"))
		var data json.RawMessage
		if d := strings.TrimSpace(r.PostForm.Get("data")); d != "" {
			data = json.RawMessage(d)
		}
		if r.PostForm.Get("form") == "schema" { // a form built from the signal's schema
			data, err = u.postedSignal(r, id, name)
		}
		if err == nil {
			_, err = u.s.Signal(ctx, id, name, data)
		}
	case "cancel":
		_, err = u.s.Cancel(ctx, id, reason)
	case "terminate":
		_, err = u.s.Terminate(ctx, id, reason)
	case "retry":
		var rt api.Retried
		if rt, err = u.s.Retry(ctx, id); err == nil {
			target = rt.Run.RunID
		}
		err = refused(err)
	case "repair":
		err = u.repair(ctx, id)
	case "migrate":
		err = u.migrate(r, id)
	default:
		err = api.NewError(api.CodeNotFound, fmt.Sprintf("no action %q (want signal, cancel, terminate, retry, repair or migrate)", act))
	}
	if err != nil {
		u.actionFailed(w, r, err)
		return
	}
	http.Redirect(w, r, uiRunsPath+"/"+url.PathEscape(target)+"?done="+act, http.StatusSeeOther)
}

// repair recreates the missing tasks of the open run id names; a finished run has none to
// recreate, and the button says so rather than report nothing done.
func (u *UI) repair(ctx context.Context, id string) error {
	run, err := u.s.Resolve(id)
	if err != nil {
		return err
	}
	if !run.Open() {
		return api.NewError(api.CodeRunClosed, fmt.Sprintf("run %s of %s is %s: only open runs are repaired", run.RunID, run.WorkflowID, run.Status))
	}
	_, err = u.s.Repair(ctx, run.WorkflowID)
	return err
}

// refused maps an engine refusal that carries no sentinel (retry's "only failed runs can be
// retried") to 409: it is about the run's state, not a server fault.
func refused(err error) error {
	if err == nil {
		return nil
	}
	e := server.ErrorOf(err)
	if e.Code == api.CodeInternal {
		return api.NewError(api.CodeRunClosed, e.Message)
	}
	return e
}

// actionFailed shows the run's page again with why the action failed.
func (u *UI) actionFailed(w http.ResponseWriter, r *http.Request, err error) {
	e := server.ErrorOf(err)
	v, verr := u.runView(r, r.PathValue("id"))
	if verr != nil {
		renderError(w, r, err)
		return
	}
	v.Error = e.Message
	if r.PostForm.Get("form") == "schema" {
		for i := range v.SignalForms {
			if v.SignalForms[i].Name == r.PostForm.Get("name") {
				v.SignalForms[i].Form.fill(r.PostForm)
			}
		}
	}
	renderPage(w, e.Status, "run", "", v)
}
