package tracing

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
)

// The queue between the commit path and the span builder. Observe appends the event to a
// slice under a mutex, bounded in events and payload bytes; the builder takes the whole
// slice at once and leaves its previous, emptied one in its place. A commit pays an append
// and an uncontended lock (the builder holds it for a swap, never while it builds), and the
// builder one lock a batch, not a channel receive an event.

// QueueSize and QueueBytes bound the events waiting for the span builder (queued, or taken
// and not yet built), in number and in payload bytes (an event holds its payload, an
// activity's output for one). A commit never waits for it: an event that finds it full is
// dropped and counted (Observer.Dropped).
const (
	QueueSize  = 8192
	QueueBytes = 64 << 20
)

// gatherFor is how long the span builder lets events gather once woken: spans reach the
// batch processor at most this late, which itself holds them for seconds. buildAt events
// queued start the build sooner, so a batch's spans (at most two an event) stay well under
// the batch processor's queue (2,048 spans by default), which drops what overflows it.
const (
	gatherFor = 20 * time.Millisecond
	buildAt   = 512
)

// observed is a queued event with what the builder needs of its run: the run's identity, not
// the whole record (its search fields and the rest stay with the engine).
type observed struct {
	ev                      history.Event
	name, workflowID, runID string
	startedAt               time.Time
}

func (it *observed) run() history.Run {
	return history.Run{Name: it.name, WorkflowID: it.workflowID, RunID: it.runID, StartedAt: it.startedAt}
}

// eventQueue is the Observer's queue; mu guards all but spare, the builder's alone.
type eventQueue struct {
	mu      sync.Mutex
	pending []observed
	events  int   // pending's and the builder's batch's: not yet built
	bytes   int64 // their payloads'
	// idle is set when the builder takes the pending events: the next event wakes it. The
	// builder sleeps until then, and lets a batch gather: a commit wakes it once a batch,
	// not once an event, so tracing adds no goroutine hand-off to a step's path.
	idle  bool
	spare []observed // the emptied slice of the last batch built, pending's next
	// gather and buildAt are gatherFor and buildAt but in a benchmark that holds the builder
	// off until it is flushed, to price the commit path alone.
	gather  time.Duration
	buildAt int

	wake    chan struct{}      // cap 1: the first event after the builder took the queue
	full    chan struct{}      // cap 1: buildAt events are pending, build now
	stop    chan struct{}      // closed by close: build what is queued and return
	flushed chan chan struct{} // flush: build what is queued now, then close the channel sent
	stopped chan struct{}      // closed when the builder has returned
	once    sync.Once
}

func newEventQueue(gather time.Duration, buildAt int) eventQueue {
	return eventQueue{idle: true, gather: gather, buildAt: buildAt, wake: make(chan struct{}, 1), full: make(chan struct{}, 1),
		stop: make(chan struct{}), flushed: make(chan chan struct{}), stopped: make(chan struct{})}
}

// Observe queues ev of run, committed live, for the spans it ends. It never blocks the
// commit: when the queue is full the event is dropped and counted, the spans it would have
// ended are lost, and the run's next event reads its state back from the history.
func (o *Observer) Observe(run history.Run, ev history.Event) {
	q := &o.q
	size := int64(len(ev.Data))
	q.mu.Lock()
	if q.events >= QueueSize || q.bytes+size > QueueBytes {
		q.mu.Unlock()
		if o.dropped.Add(1) == 1 {
			o.logf("wend: traces: the span queue is full (%d events or %d MiB): spans are dropped, not exported, until it drains", QueueSize, QueueBytes>>20)
		}
		return
	}
	q.pending = append(q.pending, observed{ev: ev, name: run.Name, workflowID: run.WorkflowID, runID: run.RunID, startedAt: run.StartedAt})
	q.events++
	q.bytes += size
	wake, n := q.idle, len(q.pending)
	q.idle = false
	q.mu.Unlock()
	if wake {
		signal(q.wake)
	} else if n == q.buildAt {
		signal(q.full)
	}
}

// Dropped is how many events found the queue full: their spans were not exported.
func (o *Observer) Dropped() uint64 { return o.dropped.Load() }

// signal leaves a token in c (capacity 1) unless one is there already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// work builds spans in batches: woken by the first event after it took the queue, it waits
// gatherFor (or until buildAt events are pending) and builds what is queued. An event queued
// after it took the queue wakes it again.
func (o *Observer) work() {
	q := &o.q
	defer close(q.stopped)
	gather := time.NewTimer(q.gather)
	gather.Stop()
	for {
		select {
		case <-q.wake:
		case done := <-q.flushed:
			o.build()
			close(done)
			continue
		case <-q.stop:
			o.build()
			return
		}
		gather.Reset(q.gather)
		var done chan struct{}
		select {
		case <-gather.C:
		case <-q.full:
			gather.Stop()
		case done = <-q.flushed:
			gather.Stop()
		case <-q.stop:
			o.build()
			return
		}
		o.build()
		if done != nil {
			close(done)
		}
	}
}

// build takes the queued events and builds their spans, until none are queued.
func (o *Observer) build() {
	q := &o.q
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending, q.idle = q.spare, true
		q.mu.Unlock()
		if len(batch) == 0 {
			q.spare = batch
			return
		}
		var bytes int64
		for i := range batch {
			bytes += int64(len(batch[i].ev.Data))
			run := batch[i].run()
			o.observe(&run, &batch[i].ev)
		}
		o.out.held.hand()
		clear(batch) // the payloads are the engine's to free
		q.spare = batch[:0]
		q.mu.Lock()
		q.events -= len(batch)
		q.bytes -= bytes
		q.mu.Unlock()
	}
}

// flush builds the spans of the events queued so far now, without waiting for a batch to
// gather, and returns when they are built.
func (o *Observer) flush() {
	done := make(chan struct{})
	select {
	case o.q.flushed <- done:
		<-done
	case <-o.q.stopped:
	}
}

// close builds the spans of the events queued so far and stops the builder; ctx bounds the wait.
func (o *Observer) close(ctx context.Context) error {
	o.q.once.Do(func() { close(o.q.stop) })
	select {
	case <-o.q.stopped:
	case <-ctx.Done():
		return fmt.Errorf("build the queued spans: %w", ctx.Err())
	}
	if n := o.dropped.Load(); n > 0 {
		o.logf("wend: traces: %d events found the span queue full; their spans were not exported", n)
	}
	return nil
}
