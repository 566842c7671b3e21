package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
)

// Server answers the control API over an engine and its store. Its methods are safe for
// concurrent use; each returns an *Error on failure.
type Server struct {
	eng   *engine.Engine // nil: read only (list, show, events, check)
	store history.Store
	// cluster, when set, holds the runs instead of eng and store (cluster.go).
	cluster Cluster
	mux     *Router
	// workflows are the registered workflows POST /v1/runs may start by name (workflows.go).
	workflows atomic.Pointer[[]api.Workflow]
	texts     registeredTexts              // their texts as last read, shared by the runs started from them
	roller    atomic.Pointer[PluginRoller] // plugins.go
	schedules scheduleHolder               // /v1/schedules (schedules.go)
	specs     specMemo                     // texts Start found valid (specmemo.go)
	batches   batchHolder                  // /v1/batches (batch_http.go)
}

// New makes a Server. eng may be nil for a read-only server over a store no engine drives:
// Start, Signal, Cancel and Wait then fail with CodeUnsupported.
func New(eng *engine.Engine, store history.Store) *Server {
	s := &Server{eng: eng, store: store}
	s.mux = s.routes()
	return s
}

// List returns the runs matching f, newest first. A clause on a search field no run has is
// refused (a CodeBadRequest error naming the fields there are; wherefields.go).
func (s *Server) List(f history.RunFilter) ([]history.Run, error) {
	if s.cluster != nil {
		return s.cluster.List(api.ListQuery{Status: f.Status, WorkflowID: f.WorkflowID}, 0)
	}
	runs, err := s.store.Runs(f)
	if err != nil {
		return nil, wrap(fmt.Errorf("list runs: %w", err))
	}
	if len(runs) == 0 {
		if err := s.checkSearchFields(f.Search); err != nil {
			return nil, err
		}
		runs = []history.Run{}
	}
	return runs, nil
}

// Resolve returns the run an id names: the newest run of a workflow id, else a run id.
func (s *Server) Resolve(id string) (history.Run, error) { return s.resolve(id) }

// resolve finds the run an id names: the newest run of a workflow id, else a run id.
func (s *Server) resolve(id string) (history.Run, error) {
	if id == "" {
		return history.Run{}, errorf(http.StatusBadRequest, api.CodeBadRequest, "no workflow id given")
	}
	if s.cluster != nil {
		return s.cluster.Resolve(id)
	}
	runs, err := s.store.Runs(history.RunFilter{WorkflowID: id})
	if err != nil {
		return history.Run{}, wrap(err)
	}
	if len(runs) > 0 {
		return runs[0], nil
	}
	r, err := s.store.Run(id)
	if errors.Is(err, history.ErrNotFound) {
		return history.Run{}, UnknownRun(id)
	}
	if err != nil {
		return history.Run{}, wrap(err)
	}
	return r, nil
}

// UnknownRun is the error for an id that names no workflow and no run, worded alike by every
// backend.
func UnknownRun(id string) *api.Error {
	return errorf(http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no workflow or run %q", id))
}

// Events returns the events with seq > after of the run id names (see Show).
func (s *Server) Events(id string, after uint64) (api.EventPage, error) {
	if s.cluster != nil {
		return s.cluster.Events(id, after)
	}
	r, err := s.resolve(id)
	if err != nil {
		return api.EventPage{}, err
	}
	evs, err := s.store.Events(r.RunID, after)
	if err != nil {
		return api.EventPage{}, wrap(fmt.Errorf("read run %s: %w", r.RunID, err))
	}
	if n := len(evs); n > 0 && evs[n-1].Seq > r.LastSeq {
		// A commit landed between the two reads: the record is behind its events. Read it
		// again, so a run never shows as open beside its own terminal event.
		if now, err := s.store.Run(r.RunID); err == nil {
			r = now
		}
	}
	if evs == nil {
		evs = []history.Event{}
	}
	return api.EventPage{Run: r, Events: evs}, nil
}

// Show returns the newest run of workflow id id (or run id id) with its history and what it
// waits for.
func (s *Server) Show(id string) (api.RunDetail, error) {
	if s.cluster != nil {
		return s.cluster.Show(id)
	}
	p, err := s.Events(id, 0)
	if err != nil {
		return api.RunDetail{}, err
	}
	if p.Run.NeverStarted() {
		return s.unstarted(p.Run)
	}
	return runview.DetailOf(p.Run, p.Events), nil
}

// Start begins a run, or returns the existing run of req.WorkflowID. req.SpecFile is the
// spec's path (for messages and relative paths, so give it absolute when the server runs
// elsewhere) and req.Source its exact text; or req.Workflow names a registered workflow
// (SetWorkflows), whose file the server reads now.
func (s *Server) Start(ctx context.Context, req api.StartRequest) (api.Started, error) {
	if s.eng == nil && s.cluster == nil {
		return api.Started{}, unsupported("start a run")
	}
	if req.Workflow != "" {
		var err error
		if req, err = s.fromRegistered(req); err != nil {
			return api.Started{}, err
		}
	}
	if req.SpecFile == "" || req.Source == "" {
		return api.Started{}, errorf(http.StatusBadRequest, api.CodeBadRequest, "start: spec_file and source are required (or workflow, a registered name)")
	}
	// The edge's limits first, before the spec is loaded: a refused id costs nothing.
	if err := engine.CheckID("workflow id", req.WorkflowID); err != nil {
		return api.Started{}, wrap(fmt.Errorf("start: %w", err))
	}
	if err := engine.CheckPayload("input", req.Input); err != nil {
		return api.Started{}, wrap(fmt.Errorf("start: %w", err))
	}
	if len(req.Input) > 0 && !json.Valid(req.Input) {
		return api.Started{}, errorf(http.StatusBadRequest, api.CodeInvalid, "start: input is not JSON")
	}
	// Load once here too: the engine reports an invalid workflow as a plain error, and the
	// caller must get a 400 for it, not a 500.
	if ds := s.specs.check(req.SpecFile, req.Source); ds.HasErrors() {
		return api.Started{}, errorf(http.StatusBadRequest, api.CodeBadWorkflow,
			fmt.Sprintf("start %s: the workflow is invalid:\n%s", req.SpecFile, ds.Error()))
	}
	if s.cluster != nil {
		return s.cluster.Start(ctx, req)
	}
	rec, isNew, err := s.eng.Start(ctx, req)
	if err != nil {
		return api.Started{}, wrap(err)
	}
	return api.Started{Run: rec, Started: isNew}, nil
}

// Signal sends a signal to the open run of the workflow (or run) id names.
func (s *Server) Signal(ctx context.Context, id, name string, data json.RawMessage) (history.Run, error) {
	sent, err := s.SendSignal(ctx, id, api.SignalRequest{Name: name, Data: data})
	return sent.Run, err
}

// SendSignal is Signal with an optional idempotency id (req.ID): a resend with the same id
// reaches the run once, and its answer says Duplicate.
func (s *Server) SendSignal(ctx context.Context, id string, req api.SignalRequest) (api.SignalSent, error) {
	name, data := req.Name, req.Data
	if name == "" {
		return api.SignalSent{}, errorf(http.StatusBadRequest, api.CodeBadRequest, "signal: no signal name given")
	}
	if err := engine.CheckID("signal name", name); err != nil {
		return api.SignalSent{}, wrap(fmt.Errorf("signal: %w", err))
	}
	if err := engine.CheckID("signal id", req.ID); err != nil {
		return api.SignalSent{}, wrap(fmt.Errorf("signal %s: %w", name, err))
	}
	if err := engine.CheckPayload("signal data", data); err != nil {
		return api.SignalSent{}, wrap(fmt.Errorf("signal %s: %w", name, err))
	}
	if len(data) > 0 && !json.Valid(data) {
		return api.SignalSent{}, errorf(http.StatusBadRequest, api.CodeBadRequest, "signal: data is not JSON")
	}
	if s.cluster != nil {
		return s.cluster.SendSignal(ctx, id, req)
	}
	var dup bool
	r, err := s.control(id, "signals to a finished run are rejected", func(wf string) (err error) {
		dup, err = s.eng.SendSignal(ctx, engine.SignalRequest{WorkflowID: wf, Name: name, Data: data, ID: req.ID})
		return err
	})
	if req.ID != "" && errors.Is(err, engine.ErrRunClosed) {
		// A resend of a signal the run took before it finished is the duplicate it is, not
		// a new signal to refuse: acknowledged, whatever the run's state now.
		if seen, serr := engine.SignalRecorded(s.store, r.WorkflowID, req.ID); serr == nil && seen {
			return api.SignalSent{Run: r, Duplicate: true}, nil
		}
	}
	return api.SignalSent{Run: r, Duplicate: dup && err == nil}, err
}

// Cancel cancels the open run of the workflow (or run) id names.
func (s *Server) Cancel(ctx context.Context, id, reason string) (history.Run, error) {
	if s.cluster != nil {
		return s.cluster.Cancel(ctx, id, reason)
	}
	return s.control(id, "a finished run cannot be cancelled", func(wf string) error {
		return s.eng.Cancel(ctx, wf, reason)
	})
}

// control resolves id, refuses a finished run with a message that names it, and sends.
func (s *Server) control(id, closedWhy string, send func(workflowID string) error) (history.Run, error) {
	r, err := s.resolve(id)
	if err != nil {
		return history.Run{}, err
	}
	if r.Open() {
		if s.eng == nil {
			return r, unsupported("steer a run")
		}
		err = send(r.WorkflowID)
		if err == nil || !errors.Is(err, engine.ErrRunClosed) {
			if err != nil {
				return r, wrap(err)
			}
			if now, err := s.resolve(r.WorkflowID); err == nil {
				r = now
			}
			return r, nil
		}
		if now, err := s.resolve(r.WorkflowID); err == nil {
			r = now // it closed meanwhile: name how
		}
		if r.Open() { // its last events are being written: say so, not that it has finished
			return r, errorf(http.StatusConflict, api.CodeRunClosed, fmt.Sprintf("run %s of %s is finishing (its end is being recorded): %s",
				r.RunID, r.WorkflowID, strings.Replace(closedWhy, "a finished run", "a finishing run", 1)))
		}
	}
	return r, errorf(http.StatusConflict, api.CodeRunClosed, fmt.Sprintf("run %s of %s is %s: %s", r.RunID, r.WorkflowID, r.Status, closedWhy))
}

// MaxWait caps Wait's timeout, so a long poll never outlives a proxy or a client's patience.
const MaxWait = 5 * time.Minute

// Wait blocks until the workflow id names has closed (following continue-as-new) or timeout
// passed, and returns its record with its output or failure.
func (s *Server) Wait(ctx context.Context, id string, timeout time.Duration) (api.Outcome, error) {
	if s.cluster != nil {
		return s.cluster.Wait(ctx, id, timeout)
	}
	r, err := s.resolve(id)
	if err != nil {
		return api.Outcome{}, err
	}
	if r.Open() {
		if s.eng == nil {
			return api.Outcome{}, unsupported("wait for a run")
		}
		if timeout <= 0 || timeout > MaxWait {
			timeout = MaxWait
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		r, err = s.eng.WaitClosed(wctx, r.WorkflowID)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				now, rerr := s.resolve(id)
				return api.Outcome{Run: now, Closed: false}, rerr
			}
			return api.Outcome{}, wrap(err)
		}
	}
	return s.outcome(r)
}

func (s *Server) outcome(r history.Run) (api.Outcome, error) {
	o := api.Outcome{Run: r, Closed: !r.Open()}
	if !o.Closed || r.LastSeq == 0 {
		return o, nil
	}
	evs, err := s.store.Events(r.RunID, r.LastSeq-1)
	if err != nil || len(evs) == 0 {
		return o, wrap(fmt.Errorf("read the end of run %s: %v", r.RunID, err))
	}
	c, err := history.DataOf[history.Closed](evs[len(evs)-1])
	if err != nil {
		return o, wrap(err)
	}
	o.Output, o.Failure = c.Output, c.Failure
	return o, nil
}

// CheckNoter is a store whose check has notes besides problems (boltstore.Store).
type CheckNoter interface {
	CheckNotes() ([]string, error)
}

// Checker is a store that can verify itself (boltstore.Store does).
type Checker interface {
	Check() ([]string, error)
}

// Check verifies the store; Problems is empty when it is sound.
func (s *Server) Check() (api.CheckReport, error) {
	if s.cluster != nil {
		return s.cluster.Check()
	}
	c, ok := s.store.(Checker)
	if !ok {
		return api.CheckReport{}, unsupported("check this store")
	}
	problems, err := c.Check()
	if err != nil {
		return api.CheckReport{}, wrap(fmt.Errorf("check: %w", err))
	}
	// The tasks against what the open runs' histories need: the store cannot tell, the
	// interpreter can.
	tasks, err := engine.CheckTasks(s.store)
	if err != nil {
		problems = append(problems, fmt.Sprintf("check tasks: %v", err))
	}
	problems = append(problems, tasks...)
	rep := api.CheckReport{Problems: problems}
	if rep.Problems == nil {
		rep.Problems = []string{}
	}
	runs, err := s.store.Runs(history.RunFilter{})
	if err != nil {
		// The check found what it found; a list that fails is one more problem.
		rep.Problems = append(rep.Problems, fmt.Sprintf("list runs: %v", err))
	}
	for _, r := range runs {
		rep.Runs++
		rep.Events += r.LastSeq
	}
	if n, ok := s.store.(CheckNoter); ok {
		notes, err := n.CheckNotes()
		if err != nil {
			rep.Problems = append(rep.Problems, err.Error())
		}
		rep.Notes = notes
	}
	return rep, nil
}

func unsupported(what string) *api.Error {
	return errorf(http.StatusNotImplemented, api.CodeUnsupported, "cannot "+what+": no engine drives this database here")
}
