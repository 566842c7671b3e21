package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Run concurrency by key (the workflow's `concurrency:`, docs/language.md). A start whose key
// has its limit of runs running is queued: its record (status queued, no events) and a queued
// task holding its WorkflowStarted payload are committed, so the queue survives a crash. When
// a run holding a slot closes (completed, failed, cancelled, terminated; a continued run keeps
// its slot for the next run of its workflow id), the first queued run of the key starts: one
// commit writes its first events and deletes its queued task. The counts are this engine's:
// the runs of a workflow name that hold a slot are read from the store the first time a start
// of that name needs them (the running runs whose own file declares the key), then kept in
// memory. A run_workflow child whose file declares a key is queued like any start (its
// parent's step waits meanwhile); a for_each shard is part of its parent's run, neither
// queued nor counted. A retry (wend retry) goes through the
// same gate: its queued payload carries RetryOf, and its dequeued start plans the retry from
// the failed run again.

// ErrQueued is returned for input to a run queued in a queue this engine does not hold (a
// signal to a run another process queued): the process that holds it takes the input.
var ErrQueued = api.ErrQueued

// queuedStart is the payload of a queued run's task.
type queuedStart struct {
	Started  history.Started `json:"started"`
	Workflow string          `json:"workflow"` // the workflow's name
	Key      string          `json:"key"`
	Limit    int             `json:"limit"`
	Order    uint64          `json:"order"` // first queued, first started, across restarts
	QueuedAt time.Time       `json:"queued_at"`
	Signals  []queuedSignal  `json:"signals,omitempty"` // taken while queued, in order (runqueue_signal.go)
}

func queuedTaskID(runID string) string { return runID + "/queued" }

// runQueue is the engine's per-key state. mu is held across a queued run's commit, so a slot
// freed meanwhile never starts a run whose queued record is not stored yet.
type runQueue struct {
	mu      sync.Mutex
	by      map[string]*keyedRuns   // by workflow name
	queued  map[string]*queuedStart // by workflow id
	leaving map[string]*queuedStart // by workflow id: let in, start not committed yet
	order   uint64                  // the last order handed out
	n       atomic.Int64            // len(queued)
	used    atomic.Bool             // a workflow with a key started or was queued: closes look
}

// keyedRuns is one workflow name's runs by key.
type keyedRuns struct {
	counted bool                      // running runs read from the store
	holders map[string]string         // workflow id -> key, of the runs that hold a slot
	running map[string]int            // slots held, by key
	queues  map[string][]*queuedStart // by key, first queued first
}

func (q *runQueue) of(name string) *keyedRuns {
	if q.by == nil {
		q.by = map[string]*keyedRuns{}
		q.queued = map[string]*queuedStart{}
		q.leaving = map[string]*queuedStart{}
		q.used.Store(true)
	}
	k := q.by[name]
	if k == nil {
		k = &keyedRuns{holders: map[string]string{}, running: map[string]int{}, queues: map[string][]*queuedStart{}}
		q.by[name] = k
	}
	return k
}

// nextOrder hands out increasing orders: after a restart they continue past the stored ones.
func (q *runQueue) nextOrder(now time.Time) uint64 {
	q.order = max(q.order+1, uint64(max(now.UnixNano(), 0)))
	return q.order
}

// countRunning reads which running runs of name hold a slot, once. q.mu is held.
func (e *Engine) countRunning(name string, k *keyedRuns) error {
	if k.counted {
		return nil
	}
	if err := holdersOf(e.store, &e.specs, name, k.holders); err != nil {
		return err
	}
	for _, key := range k.holders {
		k.running[key]++
	}
	k.counted = true
	return nil
}

// holdersOf adds to holders the running runs of workflow name that hold a slot of their key,
// by workflow id: those whose own file declares a key (shards are not counted).
func holdersOf(store history.Store, specs *specCache, name string, holders map[string]string) error {
	runs, err := store.Runs(history.RunFilter{Status: history.StatusRunning})
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.Name != name {
			continue
		}
		evs, err := store.Events(r.RunID, 0)
		if err != nil || len(evs) == 0 {
			continue // the run's own check reports it
		}
		st, w, err := specs.started(evs[0])
		if err != nil || w.Concurrency == nil || st.Shard != nil {
			continue
		}
		if key, err := keyOf(w, st); err == nil {
			holders[r.WorkflowID] = key
		}
	}
	return nil
}

func keyOf(w *spec.Workflow, st history.Started) (string, error) {
	var input any
	if len(st.Input) > 0 {
		if err := json.Unmarshal(st.Input, &input); err != nil {
			return "", err
		}
	}
	return w.Concurrency.KeyOf(st.SpecFile, st.WorkflowID, st.RunID, input)
}

// slotOrQueue takes a slot of the run's key for st, or commits st queued (deleting
// deleteTasks in the same commit: a child's start task). It returns the queued record when it
// queued the run; release gives the slot back when the start is not committed after all.
func (e *Engine) slotOrQueue(ctx context.Context, w *spec.Workflow, st history.Started, deleteTasks ...string) (queued *history.Run, release func(), err error) {
	key, err := keyOf(w, st)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	q := &e.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	k := q.of(w.Name)
	if err := e.countRunning(w.Name, k); err != nil {
		return nil, nil, err
	}
	if len(k.queues[key]) == 0 && k.running[key] < w.Concurrency.Limit {
		k.running[key]++
		k.holders[st.WorkflowID] = key
		return nil, func() { e.releaseSlot(w.Name, st.WorkflowID) }, nil
	}
	if err := e.ancestorsFillLocked(k, w, st, key); err != nil {
		return nil, nil, err
	}
	now := e.clock.Now()
	qs := &queuedStart{Started: st, Workflow: w.Name, Key: key, Limit: w.Concurrency.Limit, Order: q.nextOrder(now), QueuedAt: now}
	rec := history.Run{WorkflowID: st.WorkflowID, RunID: st.RunID, Name: w.Name, Status: history.StatusQueued,
		SpecFile: st.SpecFile, SpecSHA256: st.SpecSHA256, ParentRunID: st.ParentRunID, ParentStep: st.ParentStep, StartedAt: now}
	task := history.Task{ID: queuedTaskID(st.RunID), RunID: st.RunID, Kind: history.TaskQueued, AvailableAt: now, Data: history.MustData(qs)}
	if err := e.store.Commit(ctx, history.Commit{Runs: []history.RunUpdate{{Run: rec}}, PutTasks: []history.Task{task}, DeleteTasks: deleteTasks}); err != nil {
		if !storeRefused(err) {
			e.fatal(fmt.Errorf("commit queued run: %w", err))
		}
		return nil, nil, fmt.Errorf("start %s: %w", st.SpecFile, err)
	}
	k.queues[key] = append(k.queues[key], qs)
	q.queued[st.WorkflowID] = qs
	q.n.Add(1)
	return &rec, nil, nil
}

// releaseSlot gives back the slot a workflow id holds, if any, and starts the queued runs
// the freed slot lets in.
func (e *Engine) releaseSlot(name, workflowID string) {
	q := &e.queue
	if !q.used.Load() {
		return // no workflow with a key has run here: the common case skips the lock
	}
	q.mu.Lock()
	k := q.by[name]
	if k == nil {
		q.mu.Unlock()
		return
	}
	key, ok := k.holders[workflowID]
	if !ok {
		q.mu.Unlock()
		return
	}
	delete(k.holders, workflowID)
	k.running[key]--
	if k.running[key] <= 0 {
		delete(k.running, key)
	}
	admit := e.admissibleLocked(k, key)
	q.mu.Unlock()
	e.startQueued(admit)
}

// admissibleLocked pops the queued runs of key that fit its limit now, each taking its slot.
// q.mu is held. A parked engine starts none: it drives no run.
func (e *Engine) admissibleLocked(k *keyedRuns, key string) []*queuedStart {
	if e.opts.Parked {
		return nil
	}
	var out []*queuedStart
	for len(k.queues[key]) > 0 && k.running[key] < k.queues[key][0].Limit {
		qs := k.queues[key][0]
		k.queues[key] = k.queues[key][1:]
		if len(k.queues[key]) == 0 {
			delete(k.queues, key)
		}
		delete(e.queue.queued, qs.Started.WorkflowID)
		e.queue.leaving[qs.Started.WorkflowID] = qs
		e.queue.n.Add(-1)
		k.running[key]++
		k.holders[qs.Started.WorkflowID] = key
		out = append(out, qs)
	}
	return out
}

// startQueued starts runs that left the queue, in order, in the background: a run closes
// under its own lock, and the start commits.
func (e *Engine) startQueued(qs []*queuedStart) {
	if len(qs) == 0 {
		return
	}
	e.spawn(func() {
		for _, s := range qs {
			if err := e.startDequeued(s); err != nil {
				e.logf("wend: start queued run %s: %v", s.Started.RunID, err)
			}
		}
	})
}

// startDequeued commits a queued run's start: its first events, the signals it took while
// queued, its tasks, and the queued task deleted, in one commit. Its timeouts count from now.
// The id is claimed until the run is published: a signal or cancel that finds it started
// waits for it to be driven rather than finding no live run.
func (e *Engine) startDequeued(qs *queuedStart) error {
	done, err := e.enter()
	if err != nil {
		return err // stays queued in the store for the next process
	}
	defer done()
	st := qs.Started
	releaseID, err := e.claimID(e.ctx, st.WorkflowID)
	if err != nil {
		return err
	}
	defer releaseID()
	if st.RetryOf != "" {
		if err := e.startRetryDequeued(qs); err != nil {
			e.releaseSlot(qs.Workflow, st.WorkflowID)
			return err
		}
		return nil
	}
	w, err := e.specs.load(st)
	if err != nil {
		e.releaseSlot(qs.Workflow, st.WorkflowID)
		return err
	}
	st.ExecutionStarted = e.clock.Now()
	lr, evs, err := e.newRun(w, st)
	if err != nil {
		e.releaseSlot(qs.Workflow, st.WorkflowID)
		return err
	}
	q := &e.queue
	q.mu.Lock()
	if evs, err = e.sealLocked(lr, evs, qs); err != nil {
		q.mu.Unlock()
		e.releaseSlot(qs.Workflow, st.WorkflowID)
		return err
	}
	c := history.Commit{Runs: []history.RunUpdate{{Run: lr.rec, Events: evs}}, DeleteTasks: []string{queuedTaskID(st.RunID)}}
	tasksFor(lr.rec, evs, lr.interp.Activity, &c)
	slots := e.reserveDispatch(&c, w.Limits)
	if err := e.store.Commit(e.ctx, c); err != nil {
		q.mu.Unlock()
		slots.release(e)
		if e.isStopped() == nil {
			e.fatal(fmt.Errorf("commit queued run %s: %w", st.RunID, err))
		}
		return err
	}
	delete(q.leaving, st.WorkflowID)
	q.mu.Unlock()
	lr.mu.Lock()
	e.publish(lr)
	e.effects(lr, evs, slots)
	slots.release(e)
	lr.mu.Unlock()
	return nil
}

// cancelQueued closes a queued run without starting it: cancelled (or terminated), with no
// history. It reports false when the workflow id has no queued run.
func (e *Engine) cancelQueued(ctx context.Context, rec history.Run, terminate bool) (bool, error) {
	q := &e.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	cur, err := e.store.Run(rec.RunID)
	if err != nil {
		return false, err
	}
	if cur.Status != history.StatusQueued {
		return false, nil // it started meanwhile
	}
	cur.Status, cur.ClosedReason, cur.ClosedAt = history.StatusCancelled, history.ClosedCancelled, e.clock.Now()
	if terminate {
		cur.ClosedReason = history.ClosedTerminated
	}
	c := history.Commit{Runs: []history.RunUpdate{{Run: cur}}, DeleteTasks: []string{queuedTaskID(cur.RunID)}}
	if err := e.store.Commit(ctx, c); err != nil {
		if !storeRefused(err) {
			e.fatal(fmt.Errorf("commit cancelled queued run %s: %w", cur.RunID, err))
		}
		return true, err
	}
	if qs := q.leaving[cur.WorkflowID]; qs != nil && qs.Started.RunID == cur.RunID {
		delete(q.leaving, cur.WorkflowID) // its start finds it gone and gives its slot back
	}
	if qs := q.queued[cur.WorkflowID]; qs != nil && qs.Started.RunID == cur.RunID {
		delete(q.queued, cur.WorkflowID)
		q.n.Add(-1)
		if k := q.by[qs.Workflow]; k != nil {
			k.queues[qs.Key] = slices.DeleteFunc(k.queues[qs.Key], func(x *queuedStart) bool { return x == qs })
			if len(k.queues[qs.Key]) == 0 {
				delete(k.queues, qs.Key)
			}
		}
	}
	e.mu.Lock()
	chans := e.closeWaits[cur.WorkflowID]
	delete(e.closeWaits, cur.WorkflowID)
	e.mu.Unlock()
	for _, ch := range chans {
		close(ch)
	}
	if cur.ParentRunID != "" { // a queued child: its parent's step fails as for a cancelled child
		e.notify(cur, waitRef{cur.ParentRunID, cur.ParentStep}, history.ChildWorkflowCompleted, history.ChildWorkflowFailed)
	}
	return true, nil
}

// loadQueue takes back the queued runs a previous process left, in their order, and starts
// those whose key has a free slot. It runs once, at resume.
func (e *Engine) loadQueue(tasks []history.Task) error {
	q := &e.queue
	q.mu.Lock()
	var all []*queuedStart
	for _, t := range tasks {
		if t.Kind != history.TaskQueued {
			continue
		}
		var qs queuedStart
		if err := json.Unmarshal(t.Data, &qs); err != nil {
			e.logf("wend: task %s: %v", t.ID, err)
			continue
		}
		all = append(all, &qs)
	}
	slices.SortFunc(all, func(a, b *queuedStart) int { return cmp.Compare(a.Order, b.Order) })
	keys := map[*keyedRuns][]string{}
	for _, qs := range all {
		k := q.of(qs.Workflow)
		if len(k.queues[qs.Key]) == 0 {
			keys[k] = append(keys[k], qs.Key)
		}
		k.queues[qs.Key] = append(k.queues[qs.Key], qs)
		q.queued[qs.Started.WorkflowID] = qs
		q.order = max(q.order, qs.Order)
	}
	q.n.Store(int64(len(q.queued)))
	var admit []*queuedStart
	for _, qs := range all {
		k := q.by[qs.Workflow]
		if err := e.countRunning(qs.Workflow, k); err != nil {
			q.mu.Unlock()
			return err
		}
		admit = append(admit, e.admissibleLocked(k, qs.Key)...)
	}
	q.mu.Unlock()
	e.startQueued(admit)
	return nil
}

// QueueInfo says what a queued run waits for (runview.Queue shows it).
type QueueInfo struct {
	Key      string `json:"key"`
	Limit    int    `json:"limit"`
	Running  int    `json:"running"`  // runs of the key holding a slot now
	Position int    `json:"position"` // 1 for the first queued run of the key
}

// Queued says what the queued run of a workflow id waits for; false when it has none.
func (e *Engine) Queued(workflowID string) (QueueInfo, bool) {
	q := &e.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	qs := q.queued[workflowID]
	if qs == nil {
		return QueueInfo{}, false
	}
	k := q.by[qs.Workflow]
	return QueueInfo{Key: qs.Key, Limit: qs.Limit, Running: k.running[qs.Key],
		Position: slices.Index(k.queues[qs.Key], qs) + 1}, true
}

// QueuedRuns counts the runs waiting, queued, for a slot of their key.
func (e *Engine) QueuedRuns() int64 { return e.queue.n.Load() }

// queuedError is openRun's answer for a workflow id whose run is queued.
type queuedError struct{ rec history.Run }

func (q *queuedError) Error() string {
	return fmt.Sprintf("run %s of %q is queued under its workflow's concurrency key, in a queue this process does not hold: send it to the process that serves the database", q.rec.RunID, q.rec.WorkflowID)
}

func (q *queuedError) Unwrap() error { return ErrQueued }

// awaitQueued waits until the queued run rec leaves the queue: it starts (then WaitClosed
// finds it open) or is cancelled.
func (e *Engine) awaitQueued(ctx context.Context, rec history.Run) error {
	ch := make(chan struct{})
	e.mu.Lock()
	e.closeWaits[rec.WorkflowID] = append(e.closeWaits[rec.WorkflowID], ch)
	e.mu.Unlock()
	// Registered before this read: a start or a cancel after it closes ch or is seen here.
	for {
		cur, err := e.store.Run(rec.RunID)
		if err != nil {
			return err
		}
		if cur.Status != history.StatusQueued {
			return nil
		}
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-e.ctx.Done():
			return ErrStopped
		case <-time.After(time.Second):
			// A run that starts does not close ch until it closes itself: look again.
		}
	}
}

// startedOrQueued reads a run's WorkflowStarted payload, or for a queued run the one its
// start will write.
func (e *Engine) startedOrQueued(rec history.Run) (history.Started, error) {
	if rec.Status == history.StatusQueued {
		e.queue.mu.Lock()
		qs := e.queue.queued[rec.WorkflowID]
		e.queue.mu.Unlock()
		if qs != nil && qs.Started.RunID == rec.RunID {
			return qs.Started, nil
		}
	}
	if rec.NeverStarted() {
		return history.Started{}, fmt.Errorf("run %s of %q was %s while queued, before it started: %w", rec.RunID, rec.WorkflowID, rec.ClosedReason, ErrIDTaken)
	}
	return e.started(rec.RunID)
}

// StoredQueue says what the queued run rec waits for, from the store alone (a reader with no
// engine: wend show over a database no process drives). false when rec is not queued.
func StoredQueue(store history.Store, rec history.Run) (QueueInfo, bool, error) {
	if rec.Status != history.StatusQueued {
		return QueueInfo{}, false, nil
	}
	tasks, err := store.Tasks()
	if d := (*history.DamagedTasksError)(nil); errors.As(err, &d) {
		err = nil
	}
	if err != nil {
		return QueueInfo{}, false, err
	}
	var mine *queuedStart
	var same []queuedStart
	for _, t := range tasks {
		var qs queuedStart
		if t.Kind != history.TaskQueued || json.Unmarshal(t.Data, &qs) != nil {
			continue
		}
		if t.RunID == rec.RunID {
			mine = &qs
		}
		same = append(same, qs)
	}
	if mine == nil {
		return QueueInfo{}, false, nil
	}
	qi := QueueInfo{Key: mine.Key, Limit: mine.Limit, Position: 1}
	for _, qs := range same {
		if qs.Workflow == mine.Workflow && qs.Key == mine.Key && qs.Order < mine.Order {
			qi.Position++
		}
	}
	holders := map[string]string{}
	if err := holdersOf(store, &specCache{}, mine.Workflow, holders); err != nil {
		return QueueInfo{}, false, err
	}
	for _, key := range holders {
		if key == mine.Key {
			qi.Running++
		}
	}
	return qi, true, nil
}
