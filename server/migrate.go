package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"strconv"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/interpreter/engine"
)

// Migrate moves the open run id names to req.Source when its history replays on it (wend
// migrate); with DryRun it only checks. A run the check refuses is left as it is and the
// result says why; a run already on the text is answered as such (a repeated move is done).
func (s *Server) Migrate(ctx context.Context, id string, req api.MigrateRequest) (api.MigrateResult, error) {
	if s.cluster != nil {
		// A cluster whose workflow applies moves itself (the Temporal backend) is asked;
		// there the run's own workflow checks the text against its history.
		if m, ok := s.cluster.(interface {
			Migrate(context.Context, string, api.MigrateRequest) (api.MigrateResult, error)
		}); ok {
			return m.Migrate(ctx, id, req)
		}
		return api.MigrateResult{}, errorf(http.StatusNotImplemented, api.CodeUnsupported, "cannot migrate a run on this cluster: its backend does not move runs")
	}
	r, err := s.resolve(id)
	if err != nil {
		return api.MigrateResult{}, err
	}
	if !r.Open() {
		return api.MigrateResult{Run: r}, errorf(http.StatusConflict, api.CodeRunClosed,
			fmt.Sprintf("run %s of %s is %s: a finished run keeps the file it ran on", r.RunID, r.WorkflowID, r.Status))
	}
	if s.eng == nil {
		return api.MigrateResult{Run: r}, unsupported("migrate a run")
	}
	res, err := s.eng.Migrate(ctx, engine.MigrateRequest{WorkflowID: r.WorkflowID, File: req.File, Source: req.Source, By: req.By, DryRun: req.DryRun})
	out := api.MigrateResult{Run: r, FromSHA256: res.FromSHA256, ToSHA256: res.ToSHA256, Moved: res.Moved, Already: res.Already}
	if d := res.Divergence; d != nil {
		out.Divergence = &api.Divergence{Seq: d.Seq, Recorded: string(d.Recorded), Step: d.Step, Decided: string(d.Decided), At: d.At, Reason: d.Reason}
	}
	if now, rerr := s.resolve(r.WorkflowID); rerr == nil && now.RunID == r.RunID {
		out.Run = now
	}
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, engine.ErrInvalidSpec), errors.Is(err, engine.ErrOtherWorkflow):
		return out, errorf(http.StatusBadRequest, api.CodeBadWorkflow, err.Error())
	case errors.Is(err, engine.ErrRunClosed):
		return out, errorf(http.StatusConflict, api.CodeRunClosed, err.Error())
	}
	return out, wrap(err)
}

func (s *Server) migrateRun(w http.ResponseWriter, r *http.Request) {
	var req api.MigrateRequest
	if !readJSON(w, r, &req) {
		return
	}
	req.By = Requester(r, req.By)
	res, err := s.Migrate(r.Context(), r.PathValue("id"), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// Requester names who sent a request that changes a run, for its history: the token's holder
// for a request through the TCP listener's guard (the act token: its name is all the
// server knows), else, over the control socket, whose peer is the serving user, the name
// the local command gave or the serving user's own.
func Requester(r *http.Request, claimed string) string {
	if a, guarded := AuthOf(r); guarded {
		if a.Act {
			return "act token"
		}
		return "token"
	}
	if claimed != "" {
		return claimed
	}
	return LocalUser()
}

// LocalUser is this process's user name (its uid when the name cannot be found).
func LocalUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Getuid())
}
