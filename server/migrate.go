package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"strconv"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// MigrateRequest is POST /v1/runs/{id}/migrate's body: the workflow text to move the run to.
type MigrateRequest struct {
	File   string `json:"file,omitempty"` // where the text was read: messages, and its run_workflow targets' folder
	Source string `json:"source"`
	DryRun bool   `json:"dry_run,omitempty"`
	// By names who asks, recorded in WorkflowMigrated. Only a request over the control socket
	// (the serving user's own) may name one; a request with a token is recorded as the token's.
	By string `json:"by,omitempty"`
}

// MigrateResult is what a migration found for one run.
type MigrateResult struct {
	Run        history.Run `json:"run"` // the run's record after the request
	FromSHA256 string      `json:"from_sha256"`
	ToSHA256   string      `json:"to_sha256"`
	Moved      bool        `json:"moved"`             // WorkflowMigrated is committed
	Already    bool        `json:"already,omitempty"` // the run was on that text already; nothing recorded
	// Divergence, when set, is where the new text decides otherwise than the run's history:
	// the run was left as it was.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence is where a run's history and another text part (interpreter.Divergence).
type Divergence struct {
	Seq      uint64 `json:"seq"`                // the event where they part
	Recorded string `json:"recorded,omitempty"` // the history's event type there
	Step     string `json:"step,omitempty"`     // its step path
	Decided  string `json:"decided,omitempty"`  // what the new text decides instead
	At       string `json:"at,omitempty"`       // the step path of that decision
	Reason   string `json:"reason"`
}

// Migrate moves the open run id names to req.Source when its history replays on it (wend
// migrate); with DryRun it only checks. A run the check refuses is left as it is and the
// result says why; a run already on the text is answered as such (a repeated move is done).
func (s *Server) Migrate(ctx context.Context, id string, req MigrateRequest) (MigrateResult, error) {
	if s.cluster != nil {
		return MigrateResult{}, errorf(http.StatusNotImplemented, CodeUnsupported, "cannot migrate a run on Temporal: wend migrate moves runs of a local database")
	}
	r, err := s.resolve(id)
	if err != nil {
		return MigrateResult{}, err
	}
	if !r.Open() {
		return MigrateResult{Run: r}, errorf(http.StatusConflict, CodeRunClosed,
			fmt.Sprintf("run %s of %s is %s: a finished run keeps the file it ran on", r.RunID, r.WorkflowID, r.Status))
	}
	if s.eng == nil {
		return MigrateResult{Run: r}, unsupported("migrate a run")
	}
	res, err := s.eng.Migrate(ctx, engine.MigrateRequest{WorkflowID: r.WorkflowID, File: req.File, Source: req.Source, By: req.By, DryRun: req.DryRun})
	out := MigrateResult{Run: r, FromSHA256: res.FromSHA256, ToSHA256: res.ToSHA256, Moved: res.Moved, Already: res.Already}
	if d := res.Divergence; d != nil {
		out.Divergence = &Divergence{Seq: d.Seq, Recorded: string(d.Recorded), Step: d.Step, Decided: string(d.Decided), At: d.At, Reason: d.Reason}
	}
	if now, rerr := s.resolve(r.WorkflowID); rerr == nil && now.RunID == r.RunID {
		out.Run = now
	}
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, engine.ErrInvalidSpec), errors.Is(err, engine.ErrOtherWorkflow):
		return out, errorf(http.StatusBadRequest, CodeBadWorkflow, err.Error())
	case errors.Is(err, engine.ErrRunClosed):
		return out, errorf(http.StatusConflict, CodeRunClosed, err.Error())
	}
	return out, wrap(err)
}

func (s *Server) migrateRun(w http.ResponseWriter, r *http.Request) {
	var req MigrateRequest
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
