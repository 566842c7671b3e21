package server

import (
	"net/http"
	"sync/atomic"

	"github.com/wendflow/wend/api"
)

// The batches API (docs/api.md, Batches): /v1/batches over the BatchRunner wend serve gives
// with SetBatches (package batch: batch.New locally, batch.NewCluster on a Temporal cluster);
// a server without one answers unsupported.

type batchHolder struct {
	p atomic.Pointer[BatchRunner]
}

// SetBatches makes the server answer /v1/batches over bs. Call it before listening.
func (s *Server) SetBatches(bs BatchRunner) { s.batches.p.Store(&bs) }

// Batches is what SetBatches gave, or nil (the web UI reads it).
func (s *Server) Batches() BatchRunner {
	if p := s.batches.p.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *Server) addBatchRoutes(m *Router) {
	m.HandleFunc("POST /v1/batches", AccessAct, s.createBatch)
	m.HandleFunc("GET /v1/batches", AccessRead, s.listBatches)
	m.HandleFunc("GET /v1/batches/{id}", AccessRead, s.showBatch)
	m.HandleFunc("POST /v1/batches/{id}/cancel", AccessAct, s.cancelBatch)
}

func (s *Server) batchRunner(w http.ResponseWriter) BatchRunner {
	bs := s.Batches()
	if bs == nil {
		if s.cluster != nil {
			writeError(w, errorf(http.StatusNotImplemented, api.CodeUnsupported, "this Temporal backend runs no batches: use wend cancel|terminate|signal|retry --where, which acts on each run from the command"))
		} else {
			writeError(w, errorf(http.StatusNotImplemented, api.CodeUnsupported, "this process runs no batches: they are run by wend serve"))
		}
	}
	return bs
}

func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) {
	var req api.BatchRequest
	if !readJSON(w, r, &req) {
		return
	}
	if req.Migrate != nil {
		req.Migrate.By = Requester(r, req.Migrate.By) // a token's request is the token's, whatever it claims
	}
	bs := s.batchRunner(w)
	if bs == nil {
		return
	}
	bt, created, err := bs.Create(req)
	if err != nil {
		writeError(w, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	writeJSON(w, code, bt)
}

func (s *Server) listBatches(w http.ResponseWriter, _ *http.Request) {
	if bs := s.batchRunner(w); bs != nil {
		writeJSON(w, http.StatusOK, map[string]any{"batches": bs.List()})
	}
}

func (s *Server) showBatch(w http.ResponseWriter, r *http.Request) {
	bs := s.batchRunner(w)
	if bs == nil {
		return
	}
	bt, err := bs.Get(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, bt)
}

func (s *Server) cancelBatch(w http.ResponseWriter, r *http.Request) {
	if !readEmpty(w, r) {
		return
	}
	bs := s.batchRunner(w)
	if bs == nil {
		return
	}
	bt, err := bs.Cancel(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, bt)
}
