package tracing

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spanBatcher is the span processor of the spans FromEnv's provider makes direct: a batch
// processor for spans handed over finished. OnEnd appends a span to the open batch under a
// lock (the SDK's batch processor sends each span down a channel to its goroutine instead),
// and one goroutine exports full batches, and the open one every scheduleDelay, to each
// exporter in turn. At most maxQueue spans wait, the batch being exported counted: a span
// that finds them all taken is dropped and counted (DroppedSpans), so an exporter that
// stalls holds up neither the span builder nor a commit. Once the exporters have returned,
// the spans' attribute blocks go back to blocks: wend's exporters (OTLP over gRPC or HTTP,
// console) keep nothing of a span past ExportSpans.
type spanBatcher struct {
	exps   []sdktrace.SpanExporter
	blocks *attrBlocks
	cfg    batchConfig

	mu      sync.Mutex
	open    []sdktrace.ReadOnlySpan   // the batch being filled
	full    [][]sdktrace.ReadOnlySpan // full batches, oldest first
	waiting int                       // spans in open, in full and being exported
	spare   [][]sdktrace.ReadOnlySpan // exported batches, emptied, for the next
	closed  bool
	dropped atomic.Uint64

	kick     chan struct{}      // cap 1: a batch is full
	flushReq chan chan struct{} // export all now, then close the channel sent
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// batchConfig is the batch processor's OTEL_BSP_* settings, read as the SDK reads them.
type batchConfig struct {
	delay, timeout      time.Duration
	maxQueue, batchSize int
}

func batchConfigFrom(getenv func(string) string) batchConfig {
	c := batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, maxQueue: 2048, batchSize: 512}
	positive := func(key string, into *int) {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv(key))); err == nil && n > 0 {
			*into = n
		}
	}
	ms := func(key string, into *time.Duration) {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv(key))); err == nil && n >= 0 {
			*into = time.Duration(n) * time.Millisecond
		}
	}
	ms("OTEL_BSP_SCHEDULE_DELAY", &c.delay)
	ms("OTEL_BSP_EXPORT_TIMEOUT", &c.timeout)
	positive("OTEL_BSP_MAX_QUEUE_SIZE", &c.maxQueue)
	positive("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &c.batchSize)
	if c.delay <= 0 {
		c.delay = 5 * time.Second
	}
	c.batchSize = min(c.batchSize, c.maxQueue)
	return c
}

func newSpanBatcher(cfg batchConfig, exps ...sdktrace.SpanExporter) *spanBatcher {
	b := &spanBatcher{exps: exps, blocks: &attrBlocks{}, cfg: cfg, kick: make(chan struct{}, 1),
		flushReq: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// OnStart does nothing: spans come finished.
func (*spanBatcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues s for export, or drops and counts it when maxQueue spans wait.
func (b *spanBatcher) OnEnd(s sdktrace.ReadOnlySpan) {
	b.onEnds([]sdktrace.ReadOnlySpan{s})
}

// onEnds is OnEnd of each of spans, in order, under one lock but where a batch fills (the
// observer hands its spans over so, a few hundred at a time).
func (b *spanBatcher) onEnds(spans []sdktrace.ReadOnlySpan) {
	dropped := false
	b.mu.Lock()
	for _, s := range spans {
		if b.closed {
			break
		}
		if !s.SpanContext().IsSampled() {
			continue
		}
		if b.waiting >= b.cfg.maxQueue {
			dropped = b.dropped.Add(1) == 1 || dropped
			continue
		}
		if b.open == nil {
			if n := len(b.spare); n > 0 {
				b.open, b.spare = b.spare[n-1], b.spare[:n-1]
			} else {
				b.open = make([]sdktrace.ReadOnlySpan, 0, b.cfg.batchSize)
			}
		}
		b.open = append(b.open, s)
		b.waiting++
		if len(b.open) < b.cfg.batchSize {
			continue
		}
		b.full = append(b.full, b.open)
		b.open = nil
		behind := b.waiting >= b.cfg.maxQueue/2
		b.mu.Unlock()
		signal(b.kick)
		if behind {
			// The exporter's goroutine, just woken, waits for a processor while the span builder
			// runs through a backlog of events: let it export, so that only an exporter too slow
			// for the spans, not a late wake-up, drops them.
			runtime.Gosched()
		}
		b.mu.Lock()
	}
	b.mu.Unlock()
	if dropped {
		otel.Handle(fmt.Errorf("wend: traces: the exporter cannot keep up: %d spans wait for it; spans are dropped, not exported, until it catches up", b.cfg.maxQueue))
	}
}

// DroppedSpans is how many spans found the export queue full: they were not exported.
func (b *spanBatcher) DroppedSpans() uint64 { return b.dropped.Load() }

// run exports full batches as they fill, and the open one every delay.
func (b *spanBatcher) run() {
	defer close(b.done)
	tick := time.NewTimer(b.cfg.delay)
	defer tick.Stop()
	for {
		var flushed chan struct{}
		all := false
		select {
		case <-b.kick:
		case <-tick.C:
			all = true
		case flushed = <-b.flushReq:
			all = true
		case <-b.stop:
			b.export(true)
			return
		}
		b.export(all)
		if flushed != nil {
			close(flushed)
		}
		if all {
			tick.Reset(b.cfg.delay)
		}
	}
}

// export exports the full batches, and the open one too when all is set.
func (b *spanBatcher) export(all bool) {
	for {
		b.mu.Lock()
		var batch []sdktrace.ReadOnlySpan
		switch {
		case len(b.full) > 0:
			batch = b.full[0]
			b.full[0] = nil
			b.full = b.full[1:]
		case all && len(b.open) > 0:
			batch, b.open = b.open, nil
		}
		b.mu.Unlock()
		if batch == nil {
			return
		}
		b.exportBatch(batch)
		for _, s := range batch {
			b.blocks.put(s.Attributes())
		}
		n := len(batch)
		clear(batch)
		b.mu.Lock()
		b.waiting -= n
		if len(b.spare) < 4 {
			b.spare = append(b.spare, batch[:0])
		}
		b.mu.Unlock()
	}
}

func (b *spanBatcher) exportBatch(batch []sdktrace.ReadOnlySpan) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if b.cfg.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, b.cfg.timeout)
	}
	defer cancel()
	for _, e := range b.exps {
		if err := e.ExportSpans(ctx, batch); err != nil {
			otel.Handle(err)
		}
	}
}

// ForceFlush exports the spans queued so far.
func (b *spanBatcher) ForceFlush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case b.flushReq <- done:
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown exports the spans queued and shuts the exporters down; ctx bounds the wait.
func (b *spanBatcher) Shutdown(ctx context.Context) error {
	b.once.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.stop)
	})
	select {
	case <-b.done:
	case <-ctx.Done():
		return fmt.Errorf("export the queued spans: %w", ctx.Err())
	}
	var errs []error
	for _, e := range b.exps {
		errs = append(errs, e.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// batched is a provider exporting to exps: direct, through a spanBatcher configured by
// getenv's OTEL_BSP_* (the blocks of its spans' attributes recycled); else through the
// tracer, to a batch processor of the SDK's each (which reads OTEL_BSP_* itself).
func batched(res *resource.Resource, direct bool, getenv func(string) string, exps ...sdktrace.SpanExporter) *Provider {
	if direct {
		b := newSpanBatcher(batchConfigFrom(getenv), exps...)
		p := newProvider(res, true, b)
		p.blocks, p.batcher = b.blocks, b
		return p
	}
	procs := make([]sdktrace.SpanProcessor, len(exps))
	for i, exp := range exps {
		procs[i] = sdktrace.NewBatchSpanProcessor(exp)
	}
	return newProvider(res, false, procs...)
}
