package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Query evaluates a read-only expression over the newest run of workflow id id (or run id
// id), open or closed: the names of the workflow's top-level expressions (input, state,
// steps.ID.output, run) as they are now. Nothing is recorded.
func (s *Server) Query(id, expr string) (api.QueryResult, error) {
	if err := CheckQuery(expr); err != nil {
		return api.QueryResult{}, err
	}
	if s.cluster != nil {
		return s.cluster.Query(id, expr)
	}
	p, err := s.Events(id, 0)
	if err != nil {
		return api.QueryResult{}, err
	}
	return RunQuery(p.Run, p.Events, expr)
}

// CheckQuery is the edge's check of a query expression, before any run is read: its size,
// then that it compiles, so a typo is a 400 whatever the run.
func CheckQuery(expr string) error {
	switch {
	case expr == "":
		return errorf(http.StatusBadRequest, api.CodeBadQuery, "query: no expression given (expr=...)")
	case len(expr) > spec.MaxExpressionBytes:
		return errorf(http.StatusBadRequest, api.CodeBadQuery, fmt.Sprintf("query: the expression is %d bytes, over the %d-byte limit", len(expr), spec.MaxExpressionBytes))
	}
	if _, err := spec.CompileQuery(expr); err != nil {
		return errorf(http.StatusBadRequest, api.CodeBadQuery, "query: "+err.Error())
	}
	return nil
}

// RunQuery answers a query from a run's record and whole history, wherever they were read
// (the local store, a Temporal cluster).
func RunQuery(r history.Run, evs []history.Event, expr string) (api.QueryResult, error) {
	v, err := interpreter.Query(evs, expr)
	switch {
	case errors.Is(err, spec.ErrQuery):
		return api.QueryResult{}, errorf(http.StatusBadRequest, api.CodeBadQuery, "query: "+err.Error())
	case errors.Is(err, interpreter.ErrQueryFailed):
		return api.QueryResult{}, errorf(http.StatusUnprocessableEntity, api.CodeQueryFailed, fmt.Sprintf("query run %s of %s: %v", r.RunID, r.WorkflowID, err))
	case err != nil:
		return api.QueryResult{}, errorf(http.StatusInternalServerError, api.CodeInternal, fmt.Sprintf("query run %s of %s: %v", r.RunID, r.WorkflowID, err))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return api.QueryResult{}, errorf(http.StatusUnprocessableEntity, api.CodeQueryFailed, fmt.Sprintf("query run %s of %s: the value is not JSON: %v", r.RunID, r.WorkflowID, err))
	}
	return api.QueryResult{Run: r, Value: b}, nil
}

func (s *Server) queryRun(w http.ResponseWriter, r *http.Request) {
	res, err := s.Query(r.PathValue("id"), r.URL.Query().Get("expr"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
