package tracing

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

// stallingExporter holds every export until released, then counts the spans it was given.
type stallingExporter struct {
	release chan struct{}
	spans   atomic.Int64
}

func (s *stallingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.spans.Add(int64(len(spans)))
	return nil
}

func (s *stallingExporter) Shutdown(context.Context) error { return nil }

// TestStalledExporter: with the exporter stalled, a run still commits every event and
// closes, its spans are still built, and the spans past the export queue (its
// OTEL_BSP_MAX_QUEUE_SIZE) are dropped and counted; once the exporter resumes, every span not
// dropped is exported.
func TestStalledExporter(t *testing.T) {
	const steps, queue = 100, 64
	exp := &stallingExporter{release: make(chan struct{})}
	env := map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "64", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "16"}
	p := batched(nil, true, func(k string) string { return env[k] }, exp)
	store := history.NewMemStore()
	o := p.NewObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, t.Logf)
	e := enginetest.New(t, engine.Options{Store: store, Activities: &acts{}, Observe: o.Observe, MaxActivities: 512})
	start(t, e, sequence(steps), "")
	waitClosed(t, e)
	built := make(chan struct{})
	go func() { o.flush(); close(built) }()
	select {
	case <-built:
	case <-time.After(time.Minute):
		t.Fatal("the span builder waited for the stalled exporter")
	}
	want := 2*steps + 1 // a step and a try span a step, and the run's
	if got := p.DroppedSpans(); got != uint64(want-queue) {
		t.Errorf("DroppedSpans() = %d with the exporter stalled, want %d (%d spans, %d queued)", got, want-queue, want, queue)
	}
	if o.Dropped() != 0 {
		t.Errorf("%d events dropped: the builder was held up", o.Dropped())
	}
	e.Close()
	close(exp.release)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := exp.spans.Load(); got != queue {
		t.Errorf("%d spans exported once the exporter resumed, want the %d queued", got, queue)
	}
}

// copyingExporter keeps a deep copy of each span it exports: the batcher reuses the spans'
// attribute slices once ExportSpans returns.
type copyingExporter struct {
	mu    sync.Mutex
	spans tracetest.SpanStubs
}

func (c *copyingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range tracetest.SpanStubsFromReadOnlySpans(spans) {
		s.Attributes = slices.Clone(s.Attributes)
		c.spans = append(c.spans, s)
	}
	return nil
}

func (c *copyingExporter) Shutdown(context.Context) error { return nil }

// TestBatchedSpansAreTheDirect: the spans FromEnv's provider exports through its own batch
// processor, their attributes written into blocks reused from the spans exported before, are
// the spans handed to a span processor one by one, field by field: for runs with tries,
// retries, failures and waits, observed again and again on one provider.
func TestBatchedSpansAreTheDirect(t *testing.T) {
	const waits = "wend: v1\nname: order\nplugins: {p: ./p}\nsteps:\n  - {id: d, delay: 1ms}\n  - {id: a, activity: p.echo, with: 1}\n  - {id: n, wait_for_signal: never, timeout: 1ms, catch: {steps: []}}\n"
	exp := &copyingExporter{}
	env := map[string]string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "3"}
	p := batched(nil, true, func(k string) string { return env[k] }, exp)
	defer func() { _ = p.Shutdown(context.Background()) }()
	for _, src := range []string{workflow, waits} {
		store := history.NewMemStore()
		e := enginetest.New(t, engine.Options{Store: store, Activities: &acts{}, TraceContext: true})
		run := start(t, e, src, accepted)
		closed := waitClosed(t, e)
		e.Close()
		evs, err := store.Events(run.RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := finishedSpans(t, true, closed, evs)
		for round := range 3 {
			exp.mu.Lock()
			exp.spans = nil
			exp.mu.Unlock()
			o := p.NewObserver(func(string) ([]history.Event, error) { return evs, nil }, t.Logf)
			for _, ev := range evs {
				o.Observe(closed, ev)
			}
			o.flush()
			if err := p.batcher.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			exp.mu.Lock()
			got := exp.spans
			exp.mu.Unlock()
			slices.SortFunc(got, func(a, b tracetest.SpanStub) int {
				return strings.Compare(a.SpanContext.SpanID().String(), b.SpanContext.SpanID().String())
			})
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("round %d: %d spans batched, %d direct", round, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("round %d, span %q:\nbatched %+v\ndirect  %+v", round, want[i].Name, got[i], want[i])
				}
			}
		}
	}
}

// TestBatchConfig: the batch processor's settings are read from OTEL_BSP_* as the SDK's
// are: milliseconds and counts, a value that is not one ignored, a batch no larger than the
// queue.
func TestBatchConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want batchConfig
	}{
		{"defaults", nil, batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, maxQueue: 2048, batchSize: 512}},
		{"set", map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "250", "OTEL_BSP_EXPORT_TIMEOUT": "0", "OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "10"},
			batchConfig{delay: 250 * time.Millisecond, timeout: 0, maxQueue: 100, batchSize: 10}},
		{"not numbers", map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "1s", "OTEL_BSP_MAX_QUEUE_SIZE": "-3"},
			batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, maxQueue: 2048, batchSize: 512}},
		{"a batch over the queue", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100"},
			batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, maxQueue: 100, batchSize: 100}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := batchConfigFrom(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("batchConfigFrom = %+v, want %+v", got, tt.want)
			}
		})
	}
}
