package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// maxBody bounds a request body: a spec file plus its input, with room to spare.
const maxBody = 16 << 20

// routes registers every route with the access it needs over TCP (access.go).
func (s *Server) routes() *Router {
	m := NewRouter()
	m.HandleFunc("GET /v1/health", AccessOpen, s.health)
	m.HandleFunc("GET /v1/runs", AccessRead, s.listRuns)
	m.HandleFunc("POST /v1/runs", AccessAct, s.startRun)
	m.HandleFunc("GET /v1/workflows", AccessRead, s.listWorkflows)
	m.HandleFunc("GET /v1/runs/{id}", AccessRead, s.showRun)
	m.HandleFunc("GET /v1/runs/{id}/events", AccessRead, s.runEvents)
	m.HandleFunc("GET /v1/runs/{id}/wait", AccessRead, s.waitRun)
	m.HandleFunc("POST /v1/runs/{id}/signals", AccessAct, s.signalRun)
	m.HandleFunc("POST /v1/runs/{id}/cancel", AccessAct, s.stopRun(false))
	m.HandleFunc("POST /v1/runs/{id}/terminate", AccessAct, s.stopRun(true))
	m.HandleFunc("POST /v1/runs/{id}/retry", AccessAct, s.retryRun)
	m.HandleFunc("POST /v1/runs/{id}/repair", AccessAct, s.repairRun)
	m.HandleFunc("POST /v1/runs/{id}/migrate", AccessAct, s.migrateRun)
	m.HandleFunc("POST /v1/repair", AccessAct, s.repairAll)
	m.HandleFunc("GET /v1/runs/{id}/export", AccessRead, s.exportRun)
	m.HandleFunc("GET /v1/runs/{id}/query", AccessRead, s.queryRun)
	m.HandleFunc("GET /v1/check", AccessRead, s.check)
	m.HandleFunc("GET "+backupPath, AccessAct, s.backup)
	m.HandleFunc("POST /v1/purge/select", AccessAct, s.purgeSelect)
	m.HandleFunc("POST /v1/purge", AccessAct, s.purgeRuns)
	s.addScheduleRoutes(m) // /v1/schedules (schedules.go)
	s.addPluginRoutes(m)   // POST /v1/plugins/roll (plugins.go)
	s.addBatchRoutes(m)    // /v1/batches (batch_http.go)
	m.HandleFunc("/", AccessRead, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)))
	})
	return m
}

// ServeHTTP serves the control API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Routes lists the API's routes with the access each needs (Routed).
func (s *Server) Routes() []Route { return s.mux.Routes() }

// Need is the access a request to the API needs (Routed).
func (s *Server) Need(r *http.Request) Access { return s.mux.Need(r) }

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	status := "ok"
	if s.eng != nil && s.eng.Err() != nil {
		status = "stopped: " + s.eng.Err().Error()
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": status, "pid": os.Getpid(), "engine": s.eng != nil})
}

// listRuns is GET /v1/runs: filters and a cursor (list.go), {"runs": [...], "next_cursor": "..."}.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q, err := ParseListQuery(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := s.ListPage(q)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// RunStatuses are the statuses a run can have, in the order lists and metrics show them.
var RunStatuses = []string{history.StatusRunning, history.StatusCompleted, history.StatusFailed, history.StatusCancelled, history.StatusContinued,
	history.StatusQueued}

// CheckStatus refuses a status filter no run can have, so a typo is an error, not an empty list.
func CheckStatus(status string) error {
	if status == "" || slices.Contains(RunStatuses, status) {
		return nil
	}
	return errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("unknown status %q (want running, completed, failed, cancelled, continued or queued)", status))
}

func (s *Server) showRun(w http.ResponseWriter, r *http.Request) {
	d, err := s.Show(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			writeError(w, errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("events: after=%q is not a sequence number", a)))
			return
		}
		after = n
	}
	p, err := s.Events(r.PathValue("id"), after)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var req engine.StartRequest
	if !readJSON(w, r, &req) {
		return
	}
	withTraceParent(r, &req)
	st, err := s.Start(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	code := http.StatusOK
	if st.Started {
		code = http.StatusCreated
	}
	writeJSON(w, code, st)
}

func (s *Server) signalRun(w http.ResponseWriter, r *http.Request) {
	var req api.SignalRequest
	if !readJSON(w, r, &req) {
		return
	}
	sent, err := s.SendSignal(r.Context(), r.PathValue("id"), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, sent)
}

// stopRun is POST /v1/runs/{id}/cancel (terminate false) and .../terminate (true). The body
// is the history.CancelRequest the run records, of which a client gives only the reason: the
// path names the run, and the route says whether it is a terminate.
func (s *Server) stopRun(terminate bool) http.HandlerFunc {
	stop := s.Cancel
	if terminate {
		stop = s.Terminate
	}
	return func(w http.ResponseWriter, r *http.Request) {
		var req history.CancelRequest
		if !readJSON(w, r, &req) {
			return
		}
		if req.WorkflowID != "" || req.Terminate {
			writeError(w, errorf(http.StatusBadRequest, api.CodeBadRequest,
				"bad request body: only reason may be given (the path names the run; POST /v1/runs/{id}/terminate terminates)"))
			return
		}
		run, err := stop(r.Context(), r.PathValue("id"), req.Reason)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"run": run})
	}
}

func (s *Server) waitRun(w http.ResponseWriter, r *http.Request) {
	timeout := 30 * time.Second
	if t := r.URL.Query().Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 || d > MaxWait {
			writeError(w, errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("wait: timeout=%q must be a duration like 30s, at most %s", t, MaxWait)))
			return
		}
		timeout = d
	}
	o, err := s.Wait(r.Context(), r.PathValue("id"), timeout)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) check(w http.ResponseWriter, _ *http.Request) {
	rep, err := s.Check()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// readJSON decodes a request body strictly (unknown fields are errors: a typo must not be
// silently ignored); on failure it answers 400 and returns false.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("empty body")
	}
	if err != nil {
		writeError(w, errorf(http.StatusBadRequest, api.CodeBadRequest, "bad request body: "+err.Error()))
		return false
	}
	return true
}

func writeError(w http.ResponseWriter, err error) {
	e := wrap(err)
	writeJSON(w, e.Status, api.ErrorBody{Error: e})
}

// WriteError answers err as the API does: its status, and {"error": {"code", "message"}}.
func WriteError(w http.ResponseWriter, err error) { writeError(w, err) }

// ErrorOf gives err as the API would answer it: an *Error as it is, an engine or store
// sentinel as its code, anything else as CodeInternal; nil for nil.
func ErrorOf(err error) *api.Error { return wrap(err) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // the client went away; nothing to tell it
}
