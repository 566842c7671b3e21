package boltstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wendflow/wend/history"
)

// Commit writes c atomically; it is durable when Commit returns nil. A commit whose events do
// not continue their run's stored history fails with history.ErrSeqConflict and writes nothing.
// Cancelling ctx abandons the commit only if the writer has not taken it yet; once taken, Commit
// waits for the outcome, so a nil or non-nil result always says what is on disk.
func (s *Store) Commit(ctx context.Context, c history.Commit) error {
	if s.readOnly {
		return fmt.Errorf("commit: %w", ErrReadOnly)
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	p, err := prepare(c)
	if err != nil {
		s.rejected.Add(1)
		return fmt.Errorf("commit: %w: %w", history.ErrRefused, err)
	}
	if err := s.w.submit(ctx, p); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Request states: the writer and an impatient caller race to move a request out of queued.
const (
	queued int32 = iota
	taken
	abandoned
)

type request struct {
	p     *prepared
	state atomic.Int32
	done  chan error // buffered: the writer never blocks on a caller
}

// writer serialises the writes: one batch at a time, by its goroutine or, when that is idle
// and nothing is queued, inline by the committing caller. The goroutine sleeps while the queue
// is empty and, woken, takes everything queued (up to maxBatch) into one transaction: a lone
// commit is written at once, and commits that arrive during an fsync share the next one.
type writer struct {
	s        *Store
	maxBatch int

	mu     sync.Mutex
	queue  []*request
	closed bool
	busy   bool // a batch is being written, by loop or inline by a caller; never both

	wake   chan struct{} // capacity 1: a pending wake-up is never lost nor doubled
	exited chan struct{}
	solo   *request // the request of the commit written inline, never queued
}

func startWriter(s *Store, maxBatch int) *writer {
	w := &writer{s: s, maxBatch: maxBatch, wake: make(chan struct{}, 1), exited: make(chan struct{}),
		solo: &request{done: make(chan error, 1)}}
	go w.loop()
	return w
}

func (w *writer) submit(ctx context.Context, p *prepared) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return history.ErrClosed
	}
	if !w.busy && len(w.queue) == 0 {
		return w.inline(p)
	}
	r := &request{p: p, done: make(chan error, 1)}
	w.queue = append(w.queue, r)
	w.mu.Unlock()
	w.poke()
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		return <-r.done // being written: its outcome is the truth
	}
}

// inline writes p in the caller's goroutine; the caller holds w.mu, with the writer idle and
// nothing queued. A lone commit (the sequential path) thus skips waking the writer goroutine
// and being woken back: two thread hand-offs, each a futex wake on a 2-core VM. Commits queued
// meanwhile are left to loop, which is poked when this one is done. Only one caller writes
// inline at a time (busy), so all use the writer's one inline request, whose answer is taken
// before busy is cleared: the sequential path allocates no request nor channel.
func (w *writer) inline(p *prepared) error {
	w.busy = true
	w.mu.Unlock()
	r := w.solo
	r.p = p
	r.state.Store(taken)
	w.s.write([]*request{r}) // a slice of its own: write may delete from it
	err := <-r.done          // write answers every request before it returns
	r.p = nil
	w.mu.Lock()
	w.busy = false
	wake := len(w.queue) > 0 || w.closed // commits queued meanwhile, or a stop waiting for us
	w.mu.Unlock()
	if wake { // only then: a needless wake-up costs the other core a thread switch per commit
		w.poke()
	}
	return err
}

func (w *writer) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// stop refuses new commits and returns once the queued ones are written.
func (w *writer) stop() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.poke()
	<-w.exited
}

func (w *writer) loop() {
	defer close(w.exited)
	for {
		batch, more, closed := w.take()
		if len(batch) > 0 {
			w.s.write(batch)
			w.mu.Lock()
			w.busy = false
			w.mu.Unlock()
		}
		switch {
		case len(batch) > 0 || more:
		case closed:
			return
		default:
			<-w.wake
		}
	}
}

// take removes up to maxBatch requests from the queue, dropping abandoned ones, and says
// whether more are queued and whether the writer is closed. While a caller writes inline it
// takes nothing and reports neither: that caller pokes when it is done.
func (w *writer) take() (batch []*request, more, closed bool) {
	w.mu.Lock()
	if w.busy {
		w.mu.Unlock()
		return nil, false, false
	}
	n := min(len(w.queue), w.maxBatch)
	batch = slices.Clone(w.queue[:n])
	w.queue = slices.Delete(w.queue, 0, n)
	batch = slices.DeleteFunc(batch, func(r *request) bool {
		return !r.state.CompareAndSwap(queued, taken)
	})
	w.busy = len(batch) > 0 // loop clears it after writing
	more, closed = len(w.queue) > 0, w.closed
	w.mu.Unlock()
	return batch, more, closed
}
