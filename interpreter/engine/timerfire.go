package engine

import "github.com/wendflow/wend/history"

// Timer firings (100,000 timers may be due in the same second). A fired timer goes to its
// run through a pool of at most maxTimerDeliveries goroutines that each take firings until
// none is queued, instead of a goroutine a firing: a firing's path (the rebuild of an evicted
// run by replay, its JSON decoding, the commit) is deep, and every fresh goroutine grew its
// stack to it again by copying (docs/performance.md, "Waiting runs", has the figures).

// timerFiring is one fired timer on its way to its run.
type timerFiring struct {
	lr     *liveRun
	taskID string
	ev     history.Event
}

// fire queues a fired timer for the pool, waiting while maxTimerDeliveries are queued, and
// starts a worker unless timerMax (maxTimerDeliveries) run already. It says whether the firing was
// queued (false: the engine stopped).
func (e *Engine) fire(f timerFiring) bool {
	select {
	case e.timerq <- f:
	case <-e.ctx.Done():
		return false
	}
	e.timerMu.Lock()
	defer e.timerMu.Unlock()
	if e.timerWorkers < e.timerMax && e.spawn(e.timerWorker) {
		e.timerWorkers++
		e.timerPeak = max(e.timerPeak, e.timerWorkers)
	}
	return true
}

// timerWorker delivers queued firings until none is left; once the engine is closing it drops
// them instead (each would rebuild its run only to have its commit refused). The check for an
// empty queue and the worker's leaving are one step under timerMu, so a firing queued
// meanwhile either is seen here or finds the worker gone and starts another (fire).
func (e *Engine) timerWorker() {
	for {
		e.timerMu.Lock()
		var f timerFiring
		select {
		case f = <-e.timerq:
		default:
			e.timerWorkers--
			e.timerMu.Unlock()
			return
		}
		e.timerMu.Unlock()
		if e.ctx.Err() != nil {
			continue // closing: the timer's task stays in the store, for the next start to arm
		}
		if err := e.deliver(f.lr, f.ev); err != nil && e.isStopped() == nil {
			e.logf("wend: timer %s: %v", f.taskID, err)
		}
	}
}
