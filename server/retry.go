package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wendflow/wend/api"
)

// Retry resumes the failed newest run of the workflow (or run) id names from its failed
// activity, as a new run under the same workflow id that this server's engine drives. A run
// the engine cannot resume (not failed, timed out, compensated, or failed other than in an
// activity) is refused with CodeNotRetryable and the engine's reason.
func (s *Server) Retry(ctx context.Context, id string) (api.Retried, error) {
	if s.cluster != nil {
		return s.cluster.Retry(ctx, id)
	}
	r, err := s.resolve(id)
	if err != nil {
		return api.Retried{}, err
	}
	if newest, err := s.resolve(r.WorkflowID); err == nil && newest.RunID != r.RunID {
		// The engine retries only a workflow's newest run; resuming an older one here would
		// silently retry another run than the one named.
		return api.Retried{}, errorf(http.StatusConflict, api.CodeNotRetryable, fmt.Sprintf(
			"retry %s: run %s is not the newest run of %s (that is %s, %s); retry %s instead",
			id, r.RunID, r.WorkflowID, newest.RunID, newest.Status, r.WorkflowID))
	}
	if s.eng == nil {
		return api.Retried{}, unsupported("retry a run")
	}
	rec, err := s.eng.Retry(ctx, r.WorkflowID)
	if err != nil {
		return api.Retried{}, wrap(err)
	}
	return api.Retried{Run: rec, RetryOf: r.RunID}, nil
}

func (s *Server) retryRun(w http.ResponseWriter, r *http.Request) {
	if !readEmpty(w, r) {
		return
	}
	out, err := s.Retry(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// readEmpty accepts a request that carries no parameters: no body, or an empty JSON object
// (what clients that always send a body send). Anything else is a 400, so a field meant for
// a future version is not silently ignored.
func readEmpty(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength == 0 {
		return true
	}
	var none struct{}
	return readJSON(w, r, &none)
}
