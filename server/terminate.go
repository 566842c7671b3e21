package server

import (
	"context"
	"net/http"

	"github.com/wendflow/wend/history"
)

// Terminate stops the open run of the workflow (or run) id names at once: unlike Cancel, no
// compensation and no on_cancel step runs, so the run's effects stay as they are.
func (s *Server) Terminate(ctx context.Context, id, reason string) (history.Run, error) {
	return s.control(id, "a finished run cannot be terminated", func(wf string) error {
		return s.eng.Terminate(ctx, wf, reason)
	})
}

// TerminateRequest is the body of POST /v1/runs/{id}/terminate.
type TerminateRequest struct {
	Reason string `json:"reason,omitempty"`
}

func (s *Server) terminateRun(w http.ResponseWriter, r *http.Request) {
	var req TerminateRequest
	if !readJSON(w, r, &req) {
		return
	}
	run, err := s.Terminate(r.Context(), r.PathValue("id"), req.Reason)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": run})
}
