package engine

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Idle runs (a serve may hold 100,000 waiting runs). An open run keeps its record in e.runs for
// as long as it is open, but its state machine (the interpreter and the parsed spec, most of
// what an open run costs) may leave memory while the run waits: with Options.IdleAfter or
// Options.MaxResidentRuns a sweep on the engine's clock drops the state machines of runs
// that have taken no input for a while and have no activity try in flight. What a waiting
// run needs in the meantime stays where it was: a timer or a retry's backoff in the
// scheduler's heap, a child's or a waited workflow's outcome in e.waits and the child's
// parent id, a signal or cancel in the store. The next input of any kind rebuilds the state
// machine by replaying the run's history (ensure), under the run's lock and before the input
// is applied, so an evicted run takes every input as a resident one does: the *liveRun stays
// the same object, and no caller holding it can reach a stale state machine.

// idleStats counts what left memory and came back.
type idleStats struct {
	evicted atomic.Int64
	rebuilt atomic.Int64
}

// IdleStats reports how many state machines left memory and how many were rebuilt since the
// engine started, and how many open runs are held now.
type IdleStats struct {
	Evicted, Rebuilt int64
	Open, Resident   int
}

// Idle returns the engine's idle-run counts.
func (e *Engine) Idle() IdleStats {
	s := IdleStats{Evicted: e.idle.evicted.Load(), Rebuilt: e.idle.rebuilt.Load()}
	for _, lr := range e.liveRuns("") {
		s.Open++
		lr.mu.Lock()
		if lr.interp != nil {
			s.Resident++
		}
		lr.mu.Unlock()
	}
	return s
}

// taskNeed is a task an evicted run's history needs: what Repair checks without replaying it.
type taskNeed struct {
	id   string
	kind history.TaskKind
}

// sweepEvery is how often the sweep looks for idle runs: every second when MaxResidentRuns
// bounds them (a burst of starts outgrows the bound within seconds), else a quarter of
// IdleAfter, within [1 s, 1 min].
func (e *Engine) sweepEvery() time.Duration {
	if e.opts.IdleAfter <= 0 || e.opts.MaxResidentRuns > 0 {
		return time.Second
	}
	return min(max(e.opts.IdleAfter/4, time.Second), time.Minute)
}

func (e *Engine) startSweeper() {
	if e.opts.IdleAfter <= 0 && e.opts.MaxResidentRuns <= 0 {
		return
	}
	every := e.sweepEvery()
	var tick func()
	arm := func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.stopped == nil {
			e.sweepStop = e.clock.AfterFunc(every, tick)
		}
	}
	tick = func() {
		if e.isStopped() != nil {
			return
		}
		e.EvictIdle()
		arm()
	}
	arm()
}

// stopSweeper disarms the sweep, so a closed engine is not kept reachable by its timer.
func (e *Engine) stopSweeper() {
	e.mu.Lock()
	stop := e.sweepStop
	e.sweepStop = nil
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// EvictIdle drops the state machines of the runs that may leave memory now: those idle for
// IdleAfter, then, while more than MaxResidentRuns are held, those idle longest. It returns
// how many left. The sweep calls it; tests and benchmarks may call it directly. Whether a run
// may leave (evictable) is asked only of those the sweep would drop, oldest first, so a sweep
// that drops nothing costs a pass over the open runs and no more.
func (e *Engine) EvictIdle() int {
	type cand struct {
		lr   *liveRun
		last time.Time
	}
	var cands []cand
	resident := 0
	for _, lr := range e.liveRuns("") {
		if !lr.mu.TryLock() {
			resident++ // busy: certainly not idle
			continue
		}
		if lr.interp != nil {
			resident++
			cands = append(cands, cand{lr, lr.lastUsed})
		}
		lr.mu.Unlock()
	}
	now := e.clock.Now()
	if e.opts.MaxResidentRuns <= 0 || resident <= e.opts.MaxResidentRuns {
		// Under the bound only runs idle for IdleAfter leave: the sweep each second sorts
		// those, not every resident run.
		cands = slices.DeleteFunc(cands, func(c cand) bool { return e.opts.IdleAfter <= 0 || now.Sub(c.last) < e.opts.IdleAfter })
	}
	slices.SortFunc(cands, func(a, b cand) int { return a.last.Compare(b.last) })
	n := 0
	for _, c := range cands {
		over := e.opts.MaxResidentRuns > 0 && resident > e.opts.MaxResidentRuns
		idle := e.opts.IdleAfter > 0 && now.Sub(c.last) >= e.opts.IdleAfter
		if !over && !idle {
			break // the rest were used more recently still
		}
		c.lr.mu.Lock()
		if c.lr.lastUsed.Equal(c.last) && c.lr.interp != nil && e.evictable(c.lr) {
			e.evict(c.lr)
			resident--
			n++
		}
		c.lr.mu.Unlock()
	}
	return n
}

// evictable says whether a run's state machine may leave memory: the run is open and
// driven, nothing is queued for it, and no try of its activities is in flight (a try's call
// and its outcome go through the state machine). lr.mu is held.
func (e *Engine) evictable(lr *liveRun) bool {
	if lr.blocked != nil || !lr.rec.Open() || lr.interp.Closed() != "" {
		return false
	}
	lr.qmu.Lock()
	busy := lr.draining || len(lr.queue) > 0
	lr.qmu.Unlock()
	if busy {
		return false
	}
	pending := lr.interp.Pending()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range pending {
		if w.Kind != history.TaskActivity {
			continue
		}
		if _, ok := e.inflight[interpreter.TaskID(w.ExecID, w.Attempt)]; ok {
			return false
		}
		if !w.At.After(e.clock.Now()) {
			return false // due now: about to be called
		}
	}
	return true
}

// evict drops a run's state machine, remembering the tasks its history needs. lr.mu is held.
func (e *Engine) evict(lr *liveRun) {
	exp := neededTasks(e.store, lr)
	lr.needs = make([]taskNeed, len(exp))
	for i, t := range exp {
		lr.needs[i] = taskNeed{t.ID, t.Kind}
	}
	lr.interp, lr.w = nil, nil
	e.idle.evicted.Add(1)
}

// ensure rebuilds an evicted run's state machine by replaying its history (or builds it for
// the first time, for a run Resume registered unread); a history that no longer replays
// blocks the run, as at Recover. lr.mu is held.
func (e *Engine) ensure(lr *liveRun) error {
	if lr.interp != nil || lr.blocked != nil {
		return lr.blocked
	}
	fresh, err := e.replay(lr.rec)
	if err != nil {
		lr.blocked = err
		if lr.unread {
			e.logf("wend: run %s blocked: %v", lr.rec.RunID, err)
		} else {
			e.logf("wend: run %s blocked: rebuild after it left memory: %v", lr.rec.RunID, err)
		}
		return err
	}
	lr.interp, lr.w, lr.needs = fresh.interp, fresh.w, nil
	lr.unread = false
	e.idle.rebuilt.Add(1)
	return nil
}

// needsMet says whether the store holds every task an evicted run needed when it left.
func needsMet(needs []taskNeed, runID string, have map[string]history.Task) bool {
	for _, n := range needs {
		if got, ok := have[n.id]; !ok || got.RunID != runID || got.Kind != n.kind {
			return false
		}
	}
	return true
}

// evictAtRecover drops at once the state machine of a run the start just replayed, when runs
// may leave memory and this one waits (evictable): a restart over many waiting runs then
// holds one state machine at a time, not all of them.
func (e *Engine) evictAtRecover(lr *liveRun) {
	if !e.evicts() {
		return
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.interp != nil && e.evictable(lr) {
		e.evict(lr)
	}
}

// evicts says whether runs may leave memory (IdleAfter or MaxResidentRuns is set).
func (e *Engine) evicts() bool { return e.opts.IdleAfter > 0 || e.opts.MaxResidentRuns > 0 }

// resident returns a run's spec, rebuilding the run if it was evicted; nil if the run cannot be
// rebuilt (it is blocked now, and its next input is refused as such).
func (e *Engine) resident(lr *liveRun) *spec.Workflow {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if e.ensure(lr) != nil {
		return nil
	}
	return lr.w
}
