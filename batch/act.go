package batch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// runsOf fixes the set of runs a batch acts on: the ids given, in their order (once each),
// or the runs the filter matches that the operation can act on now, newest first (purge:
// oldest closed first, as wend purge). matched counts the filter's matches.
func (b *Runner) runsOf(req api.BatchRequest) (ids []string, matched int, err error) {
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
	q, err := server.ParseWhere(req.Where)
	if err != nil {
		return nil, 0, api.NewError(api.CodeBadRequest, "batch: where: "+err.Error())
	}
	if req.Operation == api.BatchOpPurge {
		p, err := b.srv.Purger("purge runs")
		if err != nil {
			return nil, 0, err
		}
		runs, err := p.PurgeCandidates(q.Match)
		if err != nil {
			return nil, 0, server.AsError(err)
		}
		for _, r := range runs {
			ids = append(ids, r.RunID)
		}
		return ids, len(runs), nil
	}
	runs, err := b.srv.Store().Runs(q.StoreFilter())
	if err != nil {
		return nil, 0, server.AsError(fmt.Errorf("batch: list runs: %w", err))
	}
	if len(runs) == 0 {
		if err := b.srv.CheckSearchFields(q.Search); err != nil {
			return nil, 0, err
		}
	}
	for _, r := range runs {
		if !q.Match(r) {
			continue
		}
		matched++
		if b.eligible(req.Operation, r) {
			ids = append(ids, r.RunID)
		}
	}
	return ids, matched, nil
}

// eligible says whether op can act on r now: an open run, or for retry a failed run
// that is its workflow's newest (an older one was superseded and its retry would be refused).
func (b *Runner) eligible(op string, r history.Run) bool {
	if op == api.BatchOpMigrate {
		return r.Open() && !r.NeverStarted() // a queued run starts on the text it was queued with
	}
	if op != api.BatchOpRetry {
		return r.Open()
	}
	if r.Status != history.StatusFailed {
		return false
	}
	newest, err := b.srv.Resolve(r.WorkflowID)
	return err == nil && newest.RunID == r.RunID
}

// signalID is the idempotency id of the signals a batch sends: a resend after a crash
// reaches each run once (SendSignal).
func signalID(batchID string) string { return "batch:" + batchID }

// act acts on one run. doubt says the run may have been acted on before a crash: then
// an act that would be repeated is first looked for in the run's history (a cancel or
// terminate request, a retry of it, the run purged); signals carry the batch's idempotency
// id, so their resend is a duplicate the engine drops.
func (b *Runner) act(ctx context.Context, req api.BatchRequest, batchID, runID string, doubt bool) actOutcome {
	var err error
	switch req.Operation {
	case api.BatchOpCancel, api.BatchOpTerminate:
		want := history.CancelRequested
		if req.Operation == api.BatchOpTerminate {
			want = history.TerminateRequested
		}
		if doubt && b.hasEvent(runID, want) {
			return actOutcome{}
		}
		if req.Operation == api.BatchOpCancel {
			_, err = b.srv.Cancel(ctx, runID, req.Reason)
		} else {
			_, err = b.srv.Terminate(ctx, runID, req.Reason)
		}
	case api.BatchOpSignal:
		id := cmp.Or(req.Signal.ID, signalID(batchID))
		_, err = b.srv.SendSignal(ctx, runID, api.SignalRequest{Name: req.Signal.Name, Data: req.Signal.Data, ID: id})
	case api.BatchOpRetry:
		if doubt && b.retried(runID) {
			return actOutcome{}
		}
		_, err = b.srv.Retry(ctx, runID)
	case api.BatchOpPurge:
		return b.purge(ctx, runID, doubt)
	case api.BatchOpMigrate:
		return b.migrate(ctx, req, runID)
	}
	return actResult(ctx, req, err)
}

// actResult sorts an act's error: a run that finished (or is gone, for a filter's batch) is
// skipped; a stopping engine leaves the run for the batch's resume; the rest failed.
func actResult(ctx context.Context, req api.BatchRequest, err error) actOutcome {
	if err == nil {
		return actOutcome{}
	}
	var e *api.Error
	errors.As(server.AsError(err), &e)
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

// migrate moves one run. A move is idempotent (a run already on the text answers so and
// records nothing), so a run acted on before a crash needs no look into its history; a run the
// text would break is a failure whose reason says where, and is left as it was.
func (b *Runner) migrate(ctx context.Context, req api.BatchRequest, runID string) actOutcome {
	m := req.Migrate
	res, err := b.srv.Migrate(ctx, runID, api.MigrateRequest{File: m.File, Source: m.Source, By: m.By})
	if err == nil && res.Divergence != nil {
		d := res.Divergence
		return actOutcome{err: fmt.Errorf("the new file breaks it at event %d (step %s): %s; left on file version %.12s",
			d.Seq, cmp.Or(d.Step, d.At, "of the workflow"), d.Reason, res.FromSHA256)}
	}
	return actResult(ctx, req, err)
}

// hasEvent says whether the run's history holds an event of type t.
func (b *Runner) hasEvent(runID string, t history.EventType) bool {
	evs, err := b.srv.Store().Events(runID, 0)
	return err == nil && slices.ContainsFunc(evs, func(ev history.Event) bool { return ev.Type == t })
}

// retried says whether the newest run of runID's workflow is a retry of it.
func (b *Runner) retried(runID string) bool {
	r, err := b.srv.Store().Run(runID)
	if err != nil {
		return false
	}
	newest, err := b.srv.Resolve(r.WorkflowID)
	if err != nil || newest.RunID == runID {
		return false
	}
	evs, err := b.srv.Store().Events(newest.RunID, 0)
	if err != nil || len(evs) == 0 {
		return false
	}
	st, err := history.DataOf[history.Started](evs[0])
	return err == nil && st.RetryOf == runID
}

// purge purges one run (with its closed descendants, as wend purge does).
func (b *Runner) purge(ctx context.Context, runID string, doubt bool) actOutcome {
	p, err := b.srv.Purger("purge runs")
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
	r, err := b.srv.Store().Run(runID)
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
