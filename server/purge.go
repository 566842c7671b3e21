package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// Purger is a store that can delete closed runs for good (boltstore.Store does): wend purge
// and retention. PurgeCandidates deletes nothing; PurgeRuns deletes, in small transactions,
// the runs named that are still closed and whose parent is gone.
type Purger interface {
	PurgeCandidates(match func(history.Run) bool) ([]history.Run, error)
	PurgeRuns(ctx context.Context, ids []string, done func(n int)) ([]history.Run, error)
}

func (s *Server) purger(what string) (Purger, error) {
	if s.cluster != nil {
		return nil, errorf(http.StatusNotImplemented, api.CodeUnsupported, "cannot "+what+" on a Temporal cluster: its namespace's retention deletes closed runs")
	}
	p, ok := s.store.(Purger)
	if !ok {
		return nil, errorf(http.StatusNotImplemented, api.CodeUnsupported, "cannot "+what+": this store cannot delete runs")
	}
	return p, nil
}

// PurgeSelect returns the runs a purge by f would delete, oldest closed first: closed runs
// matching f without a stored parent, each followed by its closed descendants.
func (s *Server) PurgeSelect(f history.PurgeFilter) ([]history.Run, error) {
	p, err := s.purger("select runs to purge")
	if err != nil {
		return nil, err
	}
	if f.Status == history.StatusRunning {
		return nil, errorf(http.StatusBadRequest, api.CodeBadRequest, "an open run is never purged: give a closed status (completed, failed, cancelled, continued)")
	}
	if err := CheckStatus(f.Status); err != nil {
		return nil, err
	}
	runs, err := p.PurgeCandidates(f.Match)
	if err != nil {
		return nil, wrap(err)
	}
	if runs == nil {
		runs = []history.Run{}
	}
	return runs, nil
}

// Purge deletes the runs named that are still closed and whose parent is gone (a child named
// after its parent goes with it), and returns those it deleted.
func (s *Server) Purge(ctx context.Context, ids []string) ([]history.Run, error) {
	p, err := s.purger("purge runs")
	if err != nil {
		return nil, err
	}
	if len(ids) > api.MaxPurgeIDs {
		return nil, errorf(http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("%d run ids in one purge request, at most %d", len(ids), api.MaxPurgeIDs))
	}
	runs, err := p.PurgeRuns(ctx, ids, nil)
	if err != nil {
		return nil, wrap(err)
	}
	if runs == nil {
		runs = []history.Run{}
	}
	return runs, nil
}

func (s *Server) purgeSelect(w http.ResponseWriter, r *http.Request) {
	var f history.PurgeFilter
	if !readJSON(w, r, &f) {
		return
	}
	runs, err := s.PurgeSelect(f)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Purged{Runs: runs})
}

func (s *Server) purgeRuns(w http.ResponseWriter, r *http.Request) {
	var req api.PurgeRequest
	if !readJSON(w, r, &req) {
		return
	}
	runs, err := s.Purge(r.Context(), req.RunIDs)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Purged{Runs: runs})
}
