package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// uiAction is POST /ui/runs/{id}/{action}: the operator buttons. Over TCP the guard has
// already checked the token or the session with its same-origin and CSRF checks. Success
// redirects to the run's page (303, so a reload does not post again) with a fixed
// confirmation; failure shows the page again with the reason and the error's status.
func (s *Server) uiAction(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		s.actionFailed(w, r, errorf(http.StatusBadRequest, CodeBadRequest, "unreadable form: "+err.Error()))
		return
	}
	id, act := r.PathValue("id"), r.PathValue("action")
	ctx := r.Context()
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	target := id
	var err error
	switch act {
	case "signal":
		var data json.RawMessage
		if d := strings.TrimSpace(r.PostForm.Get("data")); d != "" {
			data = json.RawMessage(d)
		}
		_, err = s.Signal(ctx, id, strings.TrimSpace(r.PostForm.Get("name")), data)
	case "cancel":
		_, err = s.Cancel(ctx, id, reason)
	case "terminate":
		_, err = s.control(id, "a finished run cannot be terminated", func(wf string) error {
			return s.eng.Terminate(ctx, wf, reason)
		})
	case "retry":
		target, err = s.uiRetry(ctx, id)
	case "repair":
		err = s.uiRepair(ctx, id)
	default:
		err = errorf(http.StatusNotFound, CodeNotFound, fmt.Sprintf("no runAction %q (want signal, cancel, terminate, retry or repair)", act))
	}
	if err != nil {
		s.actionFailed(w, r, err)
		return
	}
	http.Redirect(w, r, uiRunsPath+"/"+url.PathEscape(target)+"?done="+act, http.StatusSeeOther)
}

// uiRetry retries the failed run id names and returns the new run's id. Only the newest run
// of a workflow can be retried: the engine retries a workflow id's last run, and a button on
// an older run's page must not act on another run than the one shown.
func (s *Server) uiRetry(ctx context.Context, id string) (string, error) {
	if s.eng == nil {
		return "", unsupported("retry a run")
	}
	run, err := s.resolve(id)
	if err != nil {
		return "", err
	}
	if newest, err := s.resolve(run.WorkflowID); err == nil && newest.RunID != run.RunID {
		return "", errorf(http.StatusConflict, CodeRunClosed, fmt.Sprintf("run %s is not the newest run of %s (%s is); retry that one", run.RunID, run.WorkflowID, newest.RunID))
	}
	rec, err := s.eng.Retry(ctx, run.WorkflowID)
	if err != nil {
		return "", uiRefused(err)
	}
	return rec.RunID, nil
}

// uiRepair recreates the missing tasks of the open run id names.
func (s *Server) uiRepair(ctx context.Context, id string) error {
	if s.eng == nil {
		return unsupported("repair a run")
	}
	run, err := s.resolve(id)
	if err != nil {
		return err
	}
	if !run.Open() {
		return errorf(http.StatusConflict, CodeRunClosed, fmt.Sprintf("run %s of %s is %s: only open runs are repaired", run.RunID, run.WorkflowID, run.Status))
	}
	_, err = s.eng.Repair(ctx, run.WorkflowID)
	return err
}

// refused maps an engine refusal that carries no sentinel (retry's "only failed runs can be
// retried") to 409: it is about the run's state, not a server fault.
func uiRefused(err error) error {
	e := wrap(err)
	if e.Code == CodeInternal {
		return errorf(http.StatusConflict, CodeRunClosed, e.Message)
	}
	return e
}

// actionFailed shows the run's page again with why the action failed.
func (s *Server) actionFailed(w http.ResponseWriter, r *http.Request, err error) {
	e := wrap(err)
	v, verr := s.runView(r, r.PathValue("id"))
	if verr != nil {
		renderError(w, r, err)
		return
	}
	v.Error = e.Message
	renderPage(w, e.Status, "run", "", v)
}
