package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

// BenchmarkSequentialStepTraced is engine's BenchmarkSequentialStep with spans made and
// exported (through the batch processor serve uses, to an exporter that counts and drops
// them, so the figure is wend's price and not a collector's): the price of traces on the step
// path. Compare with `go test -run '^$' -bench Step ./interpreter/engine/`.
func BenchmarkSequentialStepTraced(b *testing.B) {
	for _, traced := range []string{"false", "true", "tracer"} {
		b.Run("traced="+traced, func(b *testing.B) { sequentialSteps(b, traced) })
	}
}

// sequentialSteps runs b.N runs of 200 steps: traced false makes no spans, true makes them as
// FromEnv's provider does by default, tracer through the SDK's tracer (as under a sampler).
func sequentialSteps(b *testing.B, traced string) {
	const steps = 200
	src := sequence(steps)
	store := history.NewMemStore()
	opts := engine.Options{Store: store, Activities: &acts{}, MaxActivities: 512}
	var p *Provider
	if traced != "false" {
		p = newProvider(nil, traced == "true", sdktrace.NewBatchSpanProcessor(&countingExporter{}))
		obs := p.NewObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, nil)
		opts.Observe, opts.TraceContext = obs.Observe, true
		defer func() { _ = p.Shutdown(context.Background()) }()
	}
	e := enginetest.New(b, opts)
	defer e.Close()
	var took time.Duration
	for i := range b.N {
		id := fmt.Sprintf("seq%d", i)
		if _, _, err := e.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: "seq.wend.yaml", Source: src, Input: json.RawMessage("null")}); err != nil {
			b.Fatal(err)
		}
		started := time.Now()
		rec, err := e.WaitClosed(context.Background(), id)
		took += time.Since(started)
		if err != nil || rec.Status != history.StatusCompleted {
			b.Fatalf("%s: %v %v", id, rec.Status, err)
		}
	}
	b.ReportMetric(float64(took.Microseconds())/float64(b.N*steps), "µs/step")
}

// countingExporter counts the spans it is given and keeps none.
type countingExporter struct{ spans atomic.Int64 }

func (c *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.spans.Add(int64(len(spans)))
	return nil
}

func (c *countingExporter) Shutdown(context.Context) error { return nil }

// BenchmarkObserve is what the engine's Observe hook costs the commit that calls it, per
// event, over the events of a run of 200 steps (its spans are built and exported besides).
func BenchmarkObserve(b *testing.B) {
	const steps = 200
	store := history.NewMemStore()
	e := enginetest.New(b, engine.Options{Store: store, Activities: &acts{}, MaxActivities: 512})
	src := sequence(steps)
	if _, _, err := e.Start(context.Background(), engine.StartRequest{WorkflowID: "seq", SpecFile: "seq.wend.yaml", Source: src, Input: json.RawMessage("null")}); err != nil {
		b.Fatal(err)
	}
	run, err := e.WaitClosed(context.Background(), "seq")
	e.Close()
	if err != nil {
		b.Fatal(err)
	}
	evs, err := store.Events(run.RunID, 0)
	if err != nil {
		b.Fatal(err)
	}
	p := newProvider(nil, true, sdktrace.NewBatchSpanProcessor(&countingExporter{}))
	defer func() { _ = p.Shutdown(context.Background()) }()
	obs := p.NewObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, nil)
	var took time.Duration
	b.ResetTimer()
	for i := range b.N {
		r := run
		r.RunID = fmt.Sprintf("%s-%d", run.RunID, i) // a fresh run each time, its spans new
		started := time.Now()
		for _, ev := range evs {
			obs.Observe(r, ev)
		}
		took += time.Since(started)
		b.StopTimer()
		settle(obs) // the next run's commits do not find this one's queued
		b.StartTimer()
	}
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

// sequence is a workflow of n activity steps, one after the other.
func sequence(n int) string {
	var src strings.Builder
	src.WriteString("wend: v1\nname: seq\nplugins: {p: ./p}\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&src, "  - {id: s%d, activity: p.echo, with: {i: %d}}\n", i, i)
	}
	return src.String()
}

// BenchmarkBuildSpans is the span builder's work for a run of 200 steps, per step: the
// events applied in order on the builder's goroutine, the spans made and handed to the batch
// processor (to an exporter that counts and drops them).
func BenchmarkBuildSpans(b *testing.B) {
	const steps = 200
	store := history.NewMemStore()
	e := enginetest.New(b, engine.Options{Store: store, Activities: &acts{}, MaxActivities: 512})
	if _, _, err := e.Start(context.Background(), engine.StartRequest{WorkflowID: "seq", SpecFile: "seq.wend.yaml", Source: sequence(steps), Input: json.RawMessage("null")}); err != nil {
		b.Fatal(err)
	}
	run, err := e.WaitClosed(context.Background(), "seq")
	e.Close()
	if err != nil {
		b.Fatal(err)
	}
	evs, err := store.Events(run.RunID, 0)
	if err != nil {
		b.Fatal(err)
	}
	exp := &countingExporter{}
	p := newProvider(nil, true, sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithMaxQueueSize(1<<20)))
	defer func() { _ = p.Shutdown(context.Background()) }()
	o := &Observer{out: p.out(), runs: map[string]*runTrace{}, logf: b.Logf,
		history: func(string) ([]history.Event, error) { return evs, nil }}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r := run
		r.RunID = fmt.Sprintf("%s-%d", run.RunID, i)
		for _, ev := range evs {
			o.observe(r, ev)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
}
