package batch

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// clusterBatchTimeout bounds each call to the cluster's batches, so a request never hangs.
const clusterBatchTimeout = 30 * time.Second

// NewCluster makes the batches of a serve over a cluster that runs them: the cluster keeps
// them durably, so there is nothing to store or resume here. What the cluster does not
// record of a request (its filter, its signal, its runs skipped when accepted) is kept in
// this process's memory for the batches it accepted.
func NewCluster(srv *server.Server, cb server.ClusterBatches, logf func(format string, args ...any)) *Runner {
	b := &Runner{srv: srv, cluster: cb, logf: logf, batches: map[string]*api.Batch{}, running: map[string]batchGoroutine{}}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

// Runs says whether these batches carry out operation op (a BatchOp*): on a cluster, retry
// and purge are refused (clusterCreate says why), so the UI does not offer them there.
func (b *Runner) Runs(op string) bool {
	if b.cluster == nil {
		return true
	}
	return op != api.BatchOpRetry && op != api.BatchOpPurge && op != api.BatchOpMigrate
}

// clusterCreate is Create on a cluster: req has been checked.
func (b *Runner) clusterCreate(req api.BatchRequest) (api.Batch, bool, error) {
	switch req.Operation {
	case api.BatchOpRetry:
		return api.Batch{}, false, api.NewError(api.CodeUnsupported,
			"retry batches are not run on a Temporal cluster (its batch operations cannot retry a run): use wend retry --where FILTER --temporal ADDR, which retries each run from the command")
	case api.BatchOpPurge:
		_, err := b.srv.Purger("purge runs")
		return api.Batch{}, false, err
	case api.BatchOpMigrate:
		return api.Batch{}, false, api.NewError(api.CodeUnsupported, "runs on a Temporal cluster are not moved to a new file: wend migrate moves the runs of a local database")
	}
	if req.RPS == 0 {
		req.RPS = api.DefaultBatchRPS
	}
	ctx, cancel := context.WithTimeout(b.ctx, clusterBatchTimeout)
	defer cancel()
	if req.ID != "" {
		if old, err := b.clusterGet(ctx, req.ID); err == nil {
			if !b.sameRequest(old, req) {
				return api.Batch{}, false, api.NewError(api.CodeIDTaken, fmt.Sprintf("batch %s exists with another request", req.ID))
			}
			return old, false, nil
		}
	} else {
		req.ID = newID()
	}
	runs, bt, err := b.clusterRuns(req)
	if err != nil {
		return api.Batch{}, false, err
	}
	now := time.Now().UTC()
	bt.ID, bt.Request, bt.Status, bt.CreatedAt, bt.UpdatedAt = req.ID, withoutRuns(req), api.BatchRunning, now, now
	if len(runs) == 0 {
		// Nothing to act on: no cluster batch is started, so this one lives in memory only.
		bt.Status, bt.ClosedAt, bt.Next = api.BatchCompleted, now, bt.Skipped
		b.remember(bt)
		return clone(bt), true, nil
	}
	started, err := b.cluster.StartBatch(ctx, bt, runs)
	if err != nil {
		return api.Batch{}, false, server.AsError(err)
	}
	b.remember(bt)
	return b.withKnown(started), true, nil
}

// sameRequest says whether req asks for what batch old was accepted for: the whole request
// when this process accepted it, else what the cluster keeps (the operation and the reason,
// which the cluster defaults when none was given).
func (b *Runner) sameRequest(old api.Batch, req api.BatchRequest) bool {
	b.mu.Lock()
	_, known := b.batches[old.ID]
	b.mu.Unlock()
	if known {
		return sameAsk(old.Request, withoutRuns(req))
	}
	return old.Request.Operation == req.Operation && (req.Reason == "" || req.Reason == old.Request.Reason)
}

// clusterRuns fixes a cluster batch's runs: the open runs the filter matches, or the
// runs the ids name (each resolved once); those closed or gone are counted as skipped.
func (b *Runner) clusterRuns(req api.BatchRequest) ([]history.Run, api.Batch, error) {
	var bt api.Batch
	if len(req.RunIDs) > 0 {
		seen, acted := map[string]bool{}, map[string]bool{}
		var runs []history.Run
		for _, id := range req.RunIDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			bt.Total++
			r, err := b.srv.Cluster().Resolve(id)
			switch {
			case err != nil && server.AsError(err).Code == api.CodeNotFound:
				skip(&bt, "gone")
			case err != nil:
				return nil, api.Batch{}, server.AsError(err)
			case !r.Open():
				skip(&bt, "finished")
			case acted[r.RunID]:
				bt.Total-- // a workflow id and its run id both given: one run
			default:
				acted[r.RunID] = true
				runs = append(runs, r)
			}
		}
		bt.Matched = len(req.RunIDs)
		return runs, bt, nil
	}
	q, err := server.ParseWhere(req.Where)
	if err != nil {
		return nil, api.Batch{}, api.NewError(api.CodeBadRequest, "batch: where: "+err.Error())
	}
	matched, err := b.srv.Cluster().List(q, 0)
	if err != nil {
		return nil, api.Batch{}, server.AsError(fmt.Errorf("batch: list runs: %w", err))
	}
	var runs []history.Run
	for _, r := range matched {
		if r.Open() {
			runs = append(runs, r)
		}
	}
	if err := checkSize(len(runs), req.Operation); err != nil {
		return nil, api.Batch{}, err
	}
	bt.Matched, bt.Total = len(matched), len(runs)
	return runs, bt, nil
}

// remember keeps what the cluster does not record of bt.
func (b *Runner) remember(bt api.Batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := clone(bt)
	b.batches[bt.ID] = &c
}

// withKnown completes the cluster's state of a batch with what this process remembers of it:
// its full request, its matches and its runs skipped when accepted (counted as acted on).
func (b *Runner) withKnown(bt api.Batch) api.Batch {
	b.mu.Lock()
	known, ok := b.batches[bt.ID]
	b.mu.Unlock()
	if !ok {
		return bt
	}
	if known.Status == api.BatchCompleted && known.Total == known.Skipped {
		return clone(*known) // accepted with nothing to act on: never on the cluster
	}
	bt.Request, bt.Matched, bt.CreatedAt = known.Request, known.Matched, known.CreatedAt
	bt.Skipped, bt.SkippedBy = known.Skipped, maps.Clone(known.SkippedBy)
	bt.Total += known.Skipped
	bt.Next += known.Skipped
	return bt
}

func (b *Runner) clusterGet(ctx context.Context, id string) (api.Batch, error) {
	bt, err := b.cluster.Batch(ctx, id)
	if err != nil {
		if e := server.AsError(err); e.Code == api.CodeNotFound {
			b.mu.Lock()
			known, ok := b.batches[id]
			b.mu.Unlock()
			if ok && known.Status == api.BatchCompleted && known.Total == known.Skipped {
				return clone(*known), nil
			}
			return api.Batch{}, api.NewError(api.CodeNotFound, fmt.Sprintf("no batch %q", id))
		}
		return api.Batch{}, server.AsError(err)
	}
	return b.withKnown(bt), nil
}

func (b *Runner) clusterList() []api.Batch {
	ctx, cancel := context.WithTimeout(b.ctx, clusterBatchTimeout)
	defer cancel()
	bts, err := b.cluster.Batches(ctx)
	if err != nil {
		b.logf("wend: list the cluster's batches: %v", err)
		return []api.Batch{}
	}
	out := make([]api.Batch, 0, len(bts))
	for _, bt := range bts {
		out = append(out, b.withKnown(bt))
	}
	return out
}

func (b *Runner) clusterCancel(id string) (api.Batch, error) {
	ctx, cancel := context.WithTimeout(b.ctx, clusterBatchTimeout)
	defer cancel()
	bt, err := b.clusterGet(ctx, id)
	if err != nil || !bt.Open() {
		return bt, err
	}
	stopped, err := b.cluster.StopBatch(ctx, id)
	if err != nil {
		return api.Batch{}, server.AsError(err)
	}
	return b.withKnown(stopped), nil
}
