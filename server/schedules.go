package server

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
)

// The schedules API (docs/api.md, Schedules): /v1/schedules over a schedule runner, which
// wend serve sets with SetSchedules. Kept in this file with one registration line in routes.

// scheduleHolder holds the runner, set once before serving; nil answers every route with
// unsupported.
type scheduleHolder struct {
	p atomic.Pointer[runner.Runner]
}

// SetSchedules makes the server answer /v1/schedules over rn. Call it before listening.
func (s *Server) SetSchedules(rn *runner.Runner) { s.schedules.p.Store(rn) }

// Schedules is the runner SetSchedules gave, or nil (the web UI's schedules page reads it).
func (s *Server) Schedules() *runner.Runner { return s.schedules.p.Load() }

func (s *Server) addScheduleRoutes(m *Router) {
	m.HandleFunc("GET /v1/schedules", AccessRead, s.listSchedules)
	m.HandleFunc("GET /v1/schedules/{id}", AccessRead, s.showSchedule)
	m.HandleFunc("POST /v1/schedules/{id}/pause", AccessAct, s.pauseSchedule)
	m.HandleFunc("POST /v1/schedules/{id}/resume", AccessAct, s.resumeSchedule)
	m.HandleFunc("POST /v1/schedules/{id}/trigger", AccessAct, s.triggerSchedule)
	m.HandleFunc("POST /v1/schedules/{id}/backfill", AccessAct, s.backfillSchedule)
	m.HandleFunc("DELETE /v1/schedules/{id}", AccessAct, s.deleteSchedule)
}

// ScheduleNoteRequest is the body of pause and resume.
type ScheduleNoteRequest struct {
	Note string `json:"note,omitempty"`
}

// TriggerRequest is the body of trigger; Overlap "" is the schedule's policy.
type TriggerRequest struct {
	Overlap string `json:"overlap,omitempty"`
}

// BackfillRequest is the body of backfill: every fire time in [from, to).
type BackfillRequest struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Overlap string    `json:"overlap,omitempty"`
}

func (s *Server) scheduleRunner(w http.ResponseWriter) *runner.Runner {
	rn := s.schedules.p.Load()
	if rn == nil {
		writeError(w, errorf(http.StatusNotImplemented, api.CodeUnsupported, "this process runs no schedules: they are run by wend serve"))
	}
	return rn
}

func scheduleError(err error) error {
	switch {
	case errors.Is(err, runner.ErrNotFound):
		return errorf(http.StatusNotFound, api.CodeNotFound, err.Error())
	case errors.Is(err, schedule.ErrBadRequest):
		return errorf(http.StatusBadRequest, api.CodeBadRequest, err.Error())
	}
	return err
}

func (s *Server) listSchedules(w http.ResponseWriter, _ *http.Request) {
	if rn := s.scheduleRunner(w); rn != nil {
		writeJSON(w, http.StatusOK, map[string]any{"schedules": rn.List()})
	}
}

func (s *Server) showSchedule(w http.ResponseWriter, r *http.Request) {
	rn := s.scheduleRunner(w)
	if rn == nil {
		return
	}
	v, err := rn.Show(r.PathValue("id"))
	if err != nil {
		writeError(w, scheduleError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedule": v})
}

func (s *Server) pauseSchedule(w http.ResponseWriter, r *http.Request)  { s.noteSchedule(w, r, true) }
func (s *Server) resumeSchedule(w http.ResponseWriter, r *http.Request) { s.noteSchedule(w, r, false) }

func (s *Server) noteSchedule(w http.ResponseWriter, r *http.Request, pause bool) {
	rn := s.scheduleRunner(w)
	if rn == nil {
		return
	}
	var req ScheduleNoteRequest
	if !readJSON(w, r, &req) {
		return
	}
	op := rn.Resume
	if pause {
		op = rn.Pause
	}
	v, err := op(r.PathValue("id"), req.Note)
	if err != nil {
		writeError(w, scheduleError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedule": v})
}

func overlapOf(s string) (schedule.Overlap, error) {
	if s == "" {
		return "", nil
	}
	o, err := schedule.ParseOverlap(s)
	if err != nil {
		return "", errorf(http.StatusBadRequest, api.CodeBadRequest, err.Error())
	}
	return o, nil
}

func (s *Server) triggerSchedule(w http.ResponseWriter, r *http.Request) {
	rn := s.scheduleRunner(w)
	if rn == nil {
		return
	}
	var req TriggerRequest
	if !readJSON(w, r, &req) {
		return
	}
	o, err := overlapOf(req.Overlap)
	if err == nil {
		var f schedule.Fire
		if f, err = rn.Trigger(r.PathValue("id"), o); err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"fire": f})
			return
		}
	}
	writeError(w, scheduleError(err))
}

func (s *Server) backfillSchedule(w http.ResponseWriter, r *http.Request) {
	rn := s.scheduleRunner(w)
	if rn == nil {
		return
	}
	var req BackfillRequest
	if !readJSON(w, r, &req) {
		return
	}
	if req.From.IsZero() || req.To.IsZero() {
		writeError(w, errorf(http.StatusBadRequest, api.CodeBadRequest, "backfill needs from and to (RFC 3339 times)"))
		return
	}
	o, err := overlapOf(req.Overlap)
	if err == nil {
		var n int
		if n, err = rn.Backfill(r.PathValue("id"), req.From, req.To, o); err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"fires": n})
			return
		}
	}
	writeError(w, scheduleError(err))
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	rn := s.scheduleRunner(w)
	if rn == nil {
		return
	}
	if err := rn.Delete(r.PathValue("id")); err != nil {
		writeError(w, scheduleError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": r.PathValue("id")})
}
