package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// batchRuns fixes the set of runs a batch acts on: the ids given, in their order (once each),
// or the runs the filter matches that the operation can act on now, newest first (purge:
// oldest closed first, as wend purge). matched counts the filter's matches.
func (s *Server) batchRuns(req BatchRequest) (ids []string, matched int, err error) {
	if len(req.RunIDs) > 0 {
		seen := map[string]bool{}
		for _, id := range req.RunIDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return ids, len(req.RunIDs), nil
	}
	q, err := ParseWhere(req.Where)
	if err != nil {
		return nil, 0, errorf(http.StatusBadRequest, api.CodeBadRequest, "batch: where: "+err.Error())
	}
	if req.Operation == BatchOpPurge {
		p, err := s.purger("purge runs")
		if err != nil {
			return nil, 0, err
		}
		runs, err := p.PurgeCandidates(q.Match)
		if err != nil {
			return nil, 0, wrap(err)
		}
		for _, r := range runs {
			ids = append(ids, r.RunID)
		}
		return ids, len(runs), nil
	}
	runs, err := s.store.Runs(q.StoreFilter())
	if err != nil {
		return nil, 0, wrap(fmt.Errorf("batch: list runs: %w", err))
	}
	if len(runs) == 0 {
		if err := s.checkSearchFields(q.Search); err != nil {
			return nil, 0, err
		}
	}
	for _, r := range runs {
		if !q.Match(r) {
			continue
		}
		matched++
		if s.batchEligible(req.Operation, r) {
			ids = append(ids, r.RunID)
		}
	}
	return ids, matched, nil
}

// batchEligible says whether op can act on r now: an open run, or for retry a failed run
// that is its workflow's newest (an older one was superseded and its retry would be refused).
func (s *Server) batchEligible(op string, r history.Run) bool {
	if op != BatchOpRetry {
		return r.Open()
	}
	if r.Status != history.StatusFailed {
		return false
	}
	newest, err := s.resolve(r.WorkflowID)
	return err == nil && newest.RunID == r.RunID
}

// batchSignalID is the idempotency id of the signals a batch sends: a resend after a crash
// reaches each run once (SendSignal).
func batchSignalID(batchID string) string { return "batch:" + batchID }

// batchAct acts on one run. doubt says the run may have been acted on before a crash: then
// an act that would be repeated is first looked for in the run's history (a cancel or
// terminate request, a retry of it, the run purged); signals carry the batch's idempotency
// id, so their resend is a duplicate the engine drops.
func (s *Server) batchAct(ctx context.Context, req BatchRequest, batchID, runID string, doubt bool) actOutcome {
	var err error
	switch req.Operation {
	case BatchOpCancel, BatchOpTerminate:
		want := history.CancelRequested
		if req.Operation == BatchOpTerminate {
			want = history.TerminateRequested
		}
		if doubt && s.hasEvent(runID, want) {
			return actOutcome{}
		}
		if req.Operation == BatchOpCancel {
			_, err = s.Cancel(ctx, runID, req.Reason)
		} else {
			_, err = s.Terminate(ctx, runID, req.Reason)
		}
	case BatchOpSignal:
		id := cmp.Or(req.Signal.ID, batchSignalID(batchID))
		_, err = s.SendSignal(ctx, runID, api.SignalRequest{Name: req.Signal.Name, Data: req.Signal.Data, ID: id})
	case BatchOpRetry:
		if doubt && s.retried(runID) {
			return actOutcome{}
		}
		_, err = s.Retry(ctx, runID)
	case BatchOpPurge:
		return s.batchPurge(ctx, runID, doubt)
	}
	return s.actResult(ctx, req, err)
}

// actResult sorts an act's error: a run that finished (or is gone, for a filter's batch) is
// skipped; a stopping engine leaves the run for the batch's resume; the rest failed.
func (s *Server) actResult(ctx context.Context, req BatchRequest, err error) actOutcome {
	if err == nil {
		return actOutcome{}
	}
	var e *api.Error
	errors.As(wrap(err), &e)
	switch {
	case ctx.Err() != nil || e.Code == api.CodeStopped:
		return actOutcome{stopped: true, err: err}
	case e.Code == api.CodeRunClosed:
		return actOutcome{skipped: "finished"}
	case e.Code == api.CodeNotRetryable:
		return actOutcome{skipped: "not retryable"}
	case e.Code == api.CodeNotFound && req.Where != "":
		return actOutcome{skipped: "gone"}
	}
	return actOutcome{err: err}
}

// hasEvent says whether the run's history holds an event of type t.
func (s *Server) hasEvent(runID string, t history.EventType) bool {
	evs, err := s.store.Events(runID, 0)
	return err == nil && slices.ContainsFunc(evs, func(ev history.Event) bool { return ev.Type == t })
}

// retried says whether the newest run of runID's workflow is a retry of it.
func (s *Server) retried(runID string) bool {
	r, err := s.store.Run(runID)
	if err != nil {
		return false
	}
	newest, err := s.resolve(r.WorkflowID)
	if err != nil || newest.RunID == runID {
		return false
	}
	evs, err := s.store.Events(newest.RunID, 0)
	if err != nil || len(evs) == 0 {
		return false
	}
	st, err := history.DataOf[history.Started](evs[0])
	return err == nil && st.RetryOf == runID
}

// batchPurge purges one run (with its closed descendants, as wend purge does).
func (s *Server) batchPurge(ctx context.Context, runID string, doubt bool) actOutcome {
	p, err := s.purger("purge runs")
	if err != nil {
		return actOutcome{err: err}
	}
	gone, err := p.PurgeRuns(ctx, []string{runID}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return actOutcome{stopped: true, err: err}
		}
		return actOutcome{err: err}
	}
	if slices.ContainsFunc(gone, func(r history.Run) bool { return r.RunID == runID }) {
		return actOutcome{}
	}
	r, err := s.store.Run(runID)
	switch {
	case errors.Is(err, history.ErrNotFound) && doubt:
		return actOutcome{} // purged before the crash
	case errors.Is(err, history.ErrNotFound):
		return actOutcome{skipped: "gone"}
	case err != nil:
		return actOutcome{err: err}
	case r.Open():
		return actOutcome{skipped: "open"}
	}
	return actOutcome{skipped: "has a parent"}
}
