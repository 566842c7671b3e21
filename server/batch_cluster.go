package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// ClusterBatches is a Cluster that runs batches itself (Temporal's batch operations, durable
// on the cluster, which act on each execution once at the batch's pace). The server checks
// the request and fixes the set of runs; the cluster acts on them and keeps the progress.
// Errors are *Error, as Cluster's.
type ClusterBatches interface {
	// StartBatch starts acting on runs (all open) for bt, whose ID, Request, Matched, Total
	// and Skipped are set, and returns bt with the cluster's state. An id already started
	// answers CodeIDTaken.
	StartBatch(ctx context.Context, bt Batch, runs []history.Run) (Batch, error)
	// Batch returns batch id's state: its status, progress and what of its request the
	// cluster records (the operation and the reason).
	Batch(ctx context.Context, id string) (Batch, error)
	// Batches returns the batches the cluster keeps, newest first.
	Batches(ctx context.Context) ([]Batch, error)
	// StopBatch stops batch id; the runs not yet acted on are left alone.
	StopBatch(ctx context.Context, id string) (Batch, error)
}

// clusterBatchTimeout bounds each call to the cluster's batches, so a request never hangs.
const clusterBatchTimeout = 30 * time.Second

// NewClusterBatches makes the batches of a serve over a cluster that runs them: the cluster
// keeps them durably, so there is nothing to store or resume here. What the cluster does not
// record of a request (its filter, its signal, its runs skipped when accepted) is kept in
// this process's memory for the batches it accepted.
func NewClusterBatches(srv *Server, cb ClusterBatches, logf func(format string, args ...any)) *Batches {
	b := &Batches{srv: srv, cluster: cb, logf: logf, batches: map[string]*Batch{}, running: map[string]batchGoroutine{}}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

// Runs says whether these batches carry out operation op (a BatchOp*): on a cluster, retry
// and purge are refused (clusterCreate says why), so the UI does not offer them there.
func (b *Batches) Runs(op string) bool {
	if b.cluster == nil {
		return true
	}
	return op != BatchOpRetry && op != BatchOpPurge
}

// clusterCreate is Create on a cluster: req has been checked.
func (b *Batches) clusterCreate(req BatchRequest) (Batch, bool, error) {
	switch req.Operation {
	case BatchOpRetry:
		return Batch{}, false, errorf(http.StatusNotImplemented, api.CodeUnsupported,
			"retry batches are not run on a Temporal cluster (its batch operations cannot retry a run): use wend retry --where FILTER --temporal ADDR, which retries each run from the command")
	case BatchOpPurge:
		_, err := b.srv.purger("purge runs")
		return Batch{}, false, err
	}
	if req.RPS == 0 {
		req.RPS = DefaultBatchRPS
	}
	ctx, cancel := context.WithTimeout(b.ctx, clusterBatchTimeout)
	defer cancel()
	if req.ID != "" {
		if old, err := b.clusterGet(ctx, req.ID); err == nil {
			if !b.sameRequest(old, req) {
				return Batch{}, false, errorf(http.StatusConflict, api.CodeIDTaken, fmt.Sprintf("batch %s exists with another request", req.ID))
			}
			return old, false, nil
		}
	} else {
		req.ID = newBatchID()
	}
	runs, bt, err := b.srv.clusterBatchRuns(req)
	if err != nil {
		return Batch{}, false, err
	}
	now := time.Now().UTC()
	bt.ID, bt.Request, bt.Status, bt.CreatedAt, bt.UpdatedAt = req.ID, withoutRuns(req), BatchRunning, now, now
	if len(runs) == 0 {
		// Nothing to act on: no cluster batch is started, so this one lives in memory only.
		bt.Status, bt.ClosedAt, bt.Next = BatchCompleted, now, bt.Skipped
		b.remember(bt)
		return bt.clone(), true, nil
	}
	started, err := b.cluster.StartBatch(ctx, bt, runs)
	if err != nil {
		return Batch{}, false, wrap(err)
	}
	b.remember(bt)
	return b.withKnown(started), true, nil
}

// sameRequest says whether req asks for what batch old was accepted for: the whole request
// when this process accepted it, else what the cluster keeps (the operation and the reason,
// which the cluster defaults when none was given).
func (b *Batches) sameRequest(old Batch, req BatchRequest) bool {
	b.mu.Lock()
	_, known := b.batches[old.ID]
	b.mu.Unlock()
	if known {
		return old.Request.same(withoutRuns(req))
	}
	return old.Request.Operation == req.Operation && (req.Reason == "" || req.Reason == old.Request.Reason)
}

// clusterBatchRuns fixes a cluster batch's runs: the open runs the filter matches, or the
// runs the ids name (each resolved once); those closed or gone are counted as skipped.
func (s *Server) clusterBatchRuns(req BatchRequest) ([]history.Run, Batch, error) {
	var bt Batch
	if len(req.RunIDs) > 0 {
		seen, acted := map[string]bool{}, map[string]bool{}
		var runs []history.Run
		for _, id := range req.RunIDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			bt.Total++
			r, err := s.cluster.Resolve(id)
			switch {
			case err != nil && wrap(err).Code == api.CodeNotFound:
				bt.skip("gone")
			case err != nil:
				return nil, Batch{}, wrap(err)
			case !r.Open():
				bt.skip("finished")
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
	q, err := ParseWhere(req.Where)
	if err != nil {
		return nil, Batch{}, errorf(http.StatusBadRequest, api.CodeBadRequest, "batch: where: "+err.Error())
	}
	matched, err := s.cluster.List(q, 0)
	if err != nil {
		return nil, Batch{}, wrap(fmt.Errorf("batch: list runs: %w", err))
	}
	var runs []history.Run
	for _, r := range matched {
		if r.Open() {
			runs = append(runs, r)
		}
	}
	if err := checkBatchSize(len(runs), req.Operation); err != nil {
		return nil, Batch{}, err
	}
	bt.Matched, bt.Total = len(matched), len(runs)
	return runs, bt, nil
}

// remember keeps what the cluster does not record of bt.
func (b *Batches) remember(bt Batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := bt.clone()
	b.batches[bt.ID] = &c
}

// withKnown completes the cluster's state of a batch with what this process remembers of it:
// its full request, its matches and its runs skipped when accepted (counted as acted on).
func (b *Batches) withKnown(bt Batch) Batch {
	b.mu.Lock()
	known, ok := b.batches[bt.ID]
	b.mu.Unlock()
	if !ok {
		return bt
	}
	if known.Status == BatchCompleted && known.Total == known.Skipped {
		return known.clone() // accepted with nothing to act on: never on the cluster
	}
	bt.Request, bt.Matched, bt.CreatedAt = known.Request, known.Matched, known.CreatedAt
	bt.Skipped, bt.SkippedBy = known.Skipped, maps.Clone(known.SkippedBy)
	bt.Total += known.Skipped
	bt.Next += known.Skipped
	return bt
}

func (b *Batches) clusterGet(ctx context.Context, id string) (Batch, error) {
	bt, err := b.cluster.Batch(ctx, id)
	if err != nil {
		if e := wrap(err); e.Code == api.CodeNotFound {
			b.mu.Lock()
			known, ok := b.batches[id]
			b.mu.Unlock()
			if ok && known.Status == BatchCompleted && known.Total == known.Skipped {
				return known.clone(), nil
			}
			return Batch{}, errorf(http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no batch %q", id))
		}
		return Batch{}, wrap(err)
	}
	return b.withKnown(bt), nil
}

func (b *Batches) clusterList() []Batch {
	ctx, cancel := context.WithTimeout(b.ctx, clusterBatchTimeout)
	defer cancel()
	bts, err := b.cluster.Batches(ctx)
	if err != nil {
		b.logf("wend: list the cluster's batches: %v", err)
		return []Batch{}
	}
	out := make([]Batch, 0, len(bts))
	for _, bt := range bts {
		out = append(out, b.withKnown(bt))
	}
	return out
}

func (b *Batches) clusterCancel(id string) (Batch, error) {
	ctx, cancel := context.WithTimeout(b.ctx, clusterBatchTimeout)
	defer cancel()
	bt, err := b.clusterGet(ctx, id)
	if err != nil || !bt.Open() {
		return bt, err
	}
	stopped, err := b.cluster.StopBatch(ctx, id)
	if err != nil {
		return Batch{}, wrap(err)
	}
	return b.withKnown(stopped), nil
}
