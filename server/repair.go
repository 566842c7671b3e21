package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// Repair recreates the tasks that the history of the open run of the workflow (or run) id
// names says must exist but the store lacks; id "" repairs every open run. It never
// restarts a running activity (engine.Repair touches only missing tasks).
func (s *Server) Repair(ctx context.Context, id string) (api.RepairReport, error) {
	if s.cluster != nil {
		return s.cluster.Repair(ctx, id)
	}
	workflowID := ""
	if id != "" {
		r, err := s.resolve(id)
		if err != nil {
			return api.RepairReport{}, err
		}
		workflowID = r.WorkflowID
	}
	if s.eng == nil {
		// Without an engine nothing can be rebuilt; that is only a problem if a run is open.
		open, err := s.store.Runs(history.RunFilter{WorkflowID: workflowID, Status: history.StatusRunning})
		if err != nil {
			return api.RepairReport{}, wrap(fmt.Errorf("repair: %w", err))
		}
		if len(open) > 0 {
			return api.RepairReport{}, unsupported("repair runs")
		}
		return api.RepairReport{Rebuilt: []string{}}, nil
	}
	rep, err := s.eng.Repair(ctx, workflowID)
	if err != nil {
		return api.RepairReport{}, wrap(fmt.Errorf("repair: %w", err))
	}
	out := api.RepairReport{Runs: rep.Runs, Rebuilt: rep.Rebuilt, Indexes: rep.Indexes}
	if out.Rebuilt == nil {
		out.Rebuilt = []string{}
	}
	return out, nil
}

// repairRun serves POST /v1/runs/{id}/repair.
func (s *Server) repairRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "" {
		// Repair("") means every run; an id lost on the way must not widen the request.
		writeError(w, errorf(http.StatusBadRequest, api.CodeBadRequest, "repair: no workflow id given"))
		return
	}
	s.serveRepair(w, r, id)
}

// repairAll serves POST /v1/repair: every open run.
func (s *Server) repairAll(w http.ResponseWriter, r *http.Request) { s.serveRepair(w, r, "") }

func (s *Server) serveRepair(w http.ResponseWriter, r *http.Request, id string) {
	if !readEmpty(w, r) {
		return
	}
	rep, err := s.Repair(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
