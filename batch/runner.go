package batch

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/server"
)

// Store keeps batches durably (boltstore.Store does; MemStore in memory): a record per batch,
// rewritten as it goes, and the run ids it acts on, written once. Bodies are opaque to the
// store.
type Store interface {
	BatchRecords() (map[string][]byte, error)
	BatchRuns(id string) ([]byte, error)
	CreateBatch(id string, record, runs []byte) error
	PutBatchRecord(id string, record []byte) error
	DeleteBatches(ids []string) error
}

// keepClosedBatches is how many closed batches are kept for GET /v1/batches; older ones are
// deleted when a new batch is accepted.
const keepClosedBatches = 1000

// batchFlushEvery is how often a batch writes its progress, at most: each write is a
// transaction of its own, and after a crash the runs acted on since the last one are
// checked before being acted on again (api.Batch.Claimed).
const batchFlushEvery = 200 * time.Millisecond

// Runner runs the batches of one serve: it accepts them, runs each in a goroutine of its own
// at its pace, and, made again after a restart, resumes those that were running. A run is
// acted on once: the act and its mark are not one transaction (the act is the engine's
// commit), so every act is idempotent per run where a crash can repeat it (act.go). It is
// the server's BatchRunner.
type Runner struct {
	srv     *server.Server
	store   Store
	cluster server.ClusterBatches // set: the cluster runs the batches (cluster.go)
	logf    func(format string, args ...any)

	createMu sync.Mutex // one Create at a time, so two requests with one id make one batch
	mu       sync.Mutex
	batches  map[string]*api.Batch     // the latest state of each, copied out under mu
	running  map[string]batchGoroutine // the batches being acted on, by id
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

var _ server.BatchRunner = (*Runner)(nil)

// New reads the stored batches; Start resumes the running ones. srv acts on the runs.
func New(srv *server.Server, st Store, logf func(format string, args ...any)) (*Runner, error) {
	recs, err := st.BatchRecords()
	if err != nil {
		return nil, fmt.Errorf("read batches: %w", err)
	}
	b := &Runner{srv: srv, store: st, logf: logf, batches: map[string]*api.Batch{}, running: map[string]batchGoroutine{}}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	for id, raw := range recs {
		var bt api.Batch
		if err := json.Unmarshal(raw, &bt); err != nil {
			return nil, fmt.Errorf("read batch %s: %w", id, err)
		}
		b.batches[id] = &bt
	}
	return b, nil
}

// Start resumes the batches that were running when the process stopped.
func (b *Runner) Start() {
	if b.cluster != nil {
		return // the cluster runs them
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bt := range b.batches {
		if bt.Open() {
			b.logf("wend: batch %s resumes at run %d of %d", bt.ID, bt.Next+1, bt.Total)
			b.launch(bt.ID)
		}
	}
}

// Close stops every batch between two runs and waits; running ones resume at the next Start.
func (b *Runner) Close() {
	b.cancel()
	b.wg.Wait()
}

// Get returns batch id.
func (b *Runner) Get(id string) (api.Batch, error) {
	if b.cluster != nil {
		ctx, cancel := context.WithTimeout(b.ctx, clusterBatchTimeout)
		defer cancel()
		return b.clusterGet(ctx, id)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	bt, ok := b.batches[id]
	if !ok {
		return api.Batch{}, api.NewError(api.CodeNotFound, fmt.Sprintf("no batch %q", id))
	}
	return clone(*bt), nil
}

// List returns every batch kept, newest first.
func (b *Runner) List() []api.Batch {
	if b.cluster != nil {
		return b.clusterList()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]api.Batch, 0, len(b.batches))
	for _, bt := range b.batches {
		out = append(out, clone(*bt))
	}
	slices.SortFunc(out, func(x, y api.Batch) int {
		return cmp.Or(y.CreatedAt.Compare(x.CreatedAt), cmp.Compare(y.ID, x.ID))
	})
	return out
}

// Counts returns how many batches are kept by status, and how many runs the running ones
// have yet to act on (metrics).
func (b *Runner) Counts() (byStatus map[string]int, pending int) {
	if b.cluster != nil {
		byStatus = map[string]int{}
		for _, bt := range b.clusterList() {
			byStatus[bt.Status]++
			if bt.Open() {
				pending += bt.Total - bt.Next
			}
		}
		return byStatus, pending
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	byStatus = map[string]int{}
	for _, bt := range b.batches {
		byStatus[bt.Status]++
		if bt.Open() {
			pending += bt.Total - bt.Next
		}
	}
	return byStatus, pending
}

// Cancel stops a running batch after the run it acts on; it is then cancelled. Cancelling a
// closed batch changes nothing and answers it.
func (b *Runner) Cancel(id string) (api.Batch, error) {
	if b.cluster != nil {
		return b.clusterCancel(id)
	}
	b.mu.Lock()
	bt, ok := b.batches[id]
	if !ok {
		b.mu.Unlock()
		return api.Batch{}, api.NewError(api.CodeNotFound, fmt.Sprintf("no batch %q", id))
	}
	g, running := b.running[id]
	b.mu.Unlock()
	if !bt.Open() {
		return b.Get(id)
	}
	if running {
		g.stop() // its goroutine stops between two runs and writes where it is
		<-g.done
	}
	up, err := b.Get(id)
	if err != nil || !up.Open() {
		return up, err
	}
	up.Status, up.ClosedAt, up.Claimed = api.BatchCancelled, time.Now().UTC(), 0
	if err := b.put(&up); err != nil {
		return api.Batch{}, server.AsError(err)
	}
	return up, nil
}

// Create accepts a batch: it checks the request, fixes the set of runs, stores both, and
// starts acting. A request with the id of an earlier batch answers that batch when it asks
// the same, and is refused when not.
func (b *Runner) Create(req api.BatchRequest) (api.Batch, bool, error) {
	if err := checkRequest(&req); err != nil {
		return api.Batch{}, false, err
	}
	b.createMu.Lock()
	defer b.createMu.Unlock()
	if b.cluster != nil {
		return b.clusterCreate(req)
	}
	if !b.srv.Drives() {
		return api.Batch{}, false, server.Unsupported("run a batch")
	}
	if req.RPS == 0 {
		req.RPS = api.DefaultBatchRPS
	}
	if req.ID != "" {
		if old, err := b.Get(req.ID); err == nil {
			if !sameAsk(old.Request, withoutRuns(req)) {
				return api.Batch{}, false, api.NewError(api.CodeIDTaken, fmt.Sprintf("batch %s exists with another request", req.ID))
			}
			return old, false, nil
		}
	} else {
		req.ID = newID()
	}
	ids, matched, err := b.runsOf(req)
	if err != nil {
		return api.Batch{}, false, err
	}
	if err := checkSize(len(ids), req.Operation); err != nil {
		return api.Batch{}, false, err
	}
	now := time.Now().UTC()
	bt := api.Batch{ID: req.ID, Request: withoutRuns(req), Status: api.BatchRunning, Matched: matched, Total: len(ids), CreatedAt: now, UpdatedAt: now}
	if len(ids) == 0 {
		bt.Status, bt.ClosedAt = api.BatchCompleted, now
	}
	rec, _ := json.Marshal(bt)
	list, _ := json.Marshal(ids)
	if err := b.store.CreateBatch(bt.ID, rec, list); err != nil {
		return api.Batch{}, false, server.AsError(fmt.Errorf("store batch: %w", err))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batches[bt.ID] = &bt
	b.forgetOld()
	if bt.Open() {
		b.launch(bt.ID)
	}
	return clone(bt), true, nil
}

// withoutRuns is r as a batch keeps it: its run ids replaced by their digest.
func withoutRuns(r api.BatchRequest) api.BatchRequest {
	r.RunsDigest = ""
	if len(r.RunIDs) > 0 {
		h := sha256.New()
		for _, id := range r.RunIDs {
			h.Write([]byte(id + "\n"))
		}
		r.RunsDigest = hex.EncodeToString(h.Sum(nil))
	}
	r.RunIDs = nil
	return r
}

// forgetOld deletes the oldest closed batches over keepClosedBatches. Called with mu held.
func (b *Runner) forgetOld() {
	var closed []*api.Batch
	for _, bt := range b.batches {
		if !bt.Open() {
			closed = append(closed, bt)
		}
	}
	if len(closed) <= keepClosedBatches {
		return
	}
	slices.SortFunc(closed, func(x, y *api.Batch) int { return x.CreatedAt.Compare(y.CreatedAt) })
	var del []string
	for _, bt := range closed[:len(closed)-keepClosedBatches] {
		del = append(del, bt.ID)
	}
	if err := b.store.DeleteBatches(del); err != nil {
		b.logf("wend: delete old batches: %v", err)
		return
	}
	for _, id := range del {
		delete(b.batches, id)
	}
}

func newID() string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return "batch-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:])
}

// batchGoroutine is a running batch's goroutine: stop asks it to stop, done closes when it
// has.
type batchGoroutine struct {
	stop context.CancelFunc
	done chan struct{}
}

// launch starts batch id's goroutine. Called with mu held.
func (b *Runner) launch(id string) {
	ctx, stop := context.WithCancel(b.ctx)
	done := make(chan struct{})
	b.running[id] = batchGoroutine{stop: stop, done: done}
	bt := clone(*b.batches[id])
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() {
			b.mu.Lock()
			delete(b.running, id)
			b.mu.Unlock()
			stop()
			close(done)
		}()
		if err := b.run(ctx, &bt); err != nil && ctx.Err() == nil {
			b.logf("wend: batch %s failed: %v", id, err)
			bt.Status, bt.Error, bt.ClosedAt = api.BatchFailed, err.Error(), time.Now().UTC()
			if perr := b.put(&bt); perr != nil {
				b.logf("wend: batch %s: %v", id, perr)
			}
		}
	}()
}

// put stores bt and publishes it.
func (b *Runner) put(bt *api.Batch) error {
	bt.UpdatedAt = time.Now().UTC()
	rec, _ := json.Marshal(bt)
	if err := b.store.PutBatchRecord(bt.ID, rec); err != nil {
		return fmt.Errorf("store progress of batch %s: %w", bt.ID, err)
	}
	b.publish(bt)
	return nil
}

func (b *Runner) publish(bt *api.Batch) {
	c := clone(*bt)
	b.mu.Lock()
	b.batches[bt.ID] = &c
	b.mu.Unlock()
}

// run acts on bt's runs from bt.Next, one at a time at its pace, in chunks: before a chunk
// it writes the chunk's end as Claimed, after it the new Next, so a crash leaves at most a
// chunk to check (recheck) before acting again. It returns nil when the batch has closed or
// ctx is done (the process stops or the batch was cancelled: it resumes, or stays
// cancelled), an error when it cannot go on.
func (b *Runner) run(ctx context.Context, bt *api.Batch) error {
	raw, err := b.store.BatchRuns(bt.ID)
	if err != nil {
		return fmt.Errorf("read runs: %w", err)
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil || len(ids) != bt.Total {
		return fmt.Errorf("read runs: %d stored run ids for %d (%v)", len(ids), bt.Total, err)
	}
	interval := time.Duration(float64(time.Second) / bt.Request.RPS)
	chunk := max(1, int(batchFlushEvery/max(interval, 1)))
	next := time.Now()
	for bt.Next < bt.Total {
		end := min(bt.Total, bt.Next+chunk)
		doubt := bt.Claimed // runs before it may have been acted on before a crash
		bt.Claimed = end
		if err := b.put(bt); err != nil {
			return err
		}
		for i := bt.Next; i < end; i++ {
			if err := waitUntil(ctx, next); err != nil {
				return b.put(bt) // stopping: keep what was done
			}
			next = next.Add(interval)
			out := b.act(ctx, bt.Request, bt.ID, ids[i], i < doubt)
			if out.stopped {
				// Not acted on: the engine or the batch stops. The batch resumes at this run
				// when serve next starts (unless it was cancelled).
				if ctx.Err() == nil {
					b.logf("wend: batch %s pauses at run %d of %d until serve restarts: %v", bt.ID, i+1, bt.Total, out.err)
				}
				return b.put(bt)
			}
			count(bt, ids[i], out)
			bt.Next = i + 1
		}
		if ctx.Err() != nil {
			return b.put(bt) // stopping: keep what was done
		}
		if bt.Next == bt.Total {
			bt.Status, bt.ClosedAt, bt.Claimed = api.BatchCompleted, time.Now().UTC(), 0
		}
		if err := b.put(bt); err != nil {
			return err
		}
		if now := time.Now(); next.Before(now.Add(-time.Second)) {
			next = now // a slow act does not earn a burst after it
		}
	}
	return nil
}

func waitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// actOutcome is what acting on one run came to.
type actOutcome struct {
	skipped string // why the run was not acted on (it had finished...); "" if it was
	err     error  // the act failed
	stopped bool   // the engine or the batch is stopping: not acted on
}

func count(bt *api.Batch, runID string, out actOutcome) {
	switch {
	case out.err != nil:
		bt.Failed++
		if len(bt.Failures) < maxFailures {
			bt.Failures = append(bt.Failures, api.BatchFailure{RunID: runID, Error: out.err.Error()})
		}
	case out.skipped != "":
		skip(bt, out.skipped)
	default:
		bt.Done++
	}
}
