package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/wendflow/wend/testkit/cputime"
	"runtime"
	"slices"
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
// them, so the figure is wend's price and not a collector's) against the same without: the
// price of traces on the step path. Each iteration is a pair: five runs of 200 steps, one
// after the other, on an engine without spans and five on an engine with them, in turn (the
// order swapped every pair), in one process; the figures are the medians of the pairs'
// ratios, so a load spike or a GC hits one pair, not the verdict.
//
// The traced side's span builder is held off until its runs have closed, then told to build
// and the batch processor to export, so the price splits in two: the commit path's, from the
// first Start to the last close (commit-traced/untraced, wall; commit-cpu-traced/untraced,
// the process's CPU), what tracing adds to the steps themselves (the Observe hook, the
// tries' trace context); and the whole, to the spans exported (cpu-traced/untraced), which
// is what the steps cost with no processor to spare for the builder. spans=direct makes
// them as FromEnv's provider does by default, spans=tracer through the SDK's tracer (as
// under a sampler).
func BenchmarkSequentialStepTraced(b *testing.B) {
	for _, spans := range []string{"direct", "tracer"} {
		b.Run("spans="+spans, func(b *testing.B) { tracedPairs(b, spans == "direct") })
	}
}

// tracedPairs runs b.N pairs of sides of 200-step runs, untraced and traced, and reports the
// medians of the pairs' ratios, each side's median µs a step (wall, to the last close; CPU,
// to the spans exported), and each side's allocations a run (the whole process's).
func tracedPairs(b *testing.B, direct bool) {
	const steps, pairRuns = 200, 5
	src := sequence(steps)
	plain := enginetest.New(b, engine.Options{Store: history.NewMemStore(), Activities: &acts{}, MaxActivities: 512})
	defer plain.Close()
	store := history.NewMemStore()
	exp := &countingExporter{}
	p := batched(nil, direct, noEnv, exp)
	defer func() { _ = p.Shutdown(context.Background()) }()
	// Held: no batch gathers before flush (a side's events, about 3,000, fit the queue).
	obs := p.newObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, nil, time.Hour, QueueSize+1)
	traced := enginetest.New(b, engine.Options{Store: store, Activities: &acts{}, MaxActivities: 512, Observe: obs.Observe, TraceContext: true})
	defer traced.Close()

	type cost struct {
		wall, cpu, cpuAll time.Duration // to the last close; CPU to the spans exported
		allocs, bytes     uint64
	}
	// side runs pairRuns runs one after the other, as a stream of commits.
	side := func(e *engine.Engine, pair int, spans bool) cost {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		allocs, bytes := ms.Mallocs, ms.TotalAlloc
		cpu, started := cputime.Process(), time.Now()
		for r := range pairRuns {
			id := fmt.Sprintf("seq%d-%d", pair, r)
			if _, _, err := e.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: "seq.wend.yaml", Source: src, Input: json.RawMessage("null")}); err != nil {
				b.Fatal(err)
			}
			rec, err := e.WaitClosed(context.Background(), id)
			if err != nil || rec.Status != history.StatusCompleted {
				b.Fatalf("%s: %v %v", id, rec.Status, err)
			}
		}
		c := cost{wall: time.Since(started), cpu: cputime.Process() - cpu}
		if spans {
			obs.flush()
			if err := p.tp.ForceFlush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		c.cpuAll = cputime.Process() - cpu
		runtime.ReadMemStats(&ms)
		c.allocs, c.bytes = ms.Mallocs-allocs, ms.TotalAlloc-bytes
		return c
	}
	var wallRatios, cpuRatios, allRatios []float64
	var plainWall, tracedWall, plainCPU, tracedCPU []time.Duration
	var sum [2]cost
	for i := range b.N {
		var off, on cost
		if i%2 == 0 {
			off = side(plain, i, false)
			on = side(traced, i, true)
		} else {
			on = side(traced, i, true)
			off = side(plain, i, false)
		}
		wallRatios = append(wallRatios, float64(on.wall)/float64(off.wall))
		if off.cpu > 0 {
			cpuRatios = append(cpuRatios, float64(on.cpu)/float64(off.cpu))
			allRatios = append(allRatios, float64(on.cpuAll)/float64(off.cpuAll))
		}
		plainWall, tracedWall = append(plainWall, off.wall), append(tracedWall, on.wall)
		plainCPU, tracedCPU = append(plainCPU, off.cpuAll), append(tracedCPU, on.cpuAll)
		for j, c := range []cost{off, on} {
			sum[j].allocs += c.allocs
			sum[j].bytes += c.bytes
		}
	}
	b.ReportMetric(median(wallRatios), "commit-traced/untraced")
	if len(cpuRatios) > 0 {
		b.ReportMetric(median(cpuRatios), "commit-cpu-traced/untraced")
		b.ReportMetric(median(allRatios), "cpu-traced/untraced")
	}
	perStep := func(ds []time.Duration) float64 {
		return float64(medianDuration(ds).Nanoseconds()) / 1e3 / (pairRuns * steps)
	}
	b.ReportMetric(perStep(plainWall), "µs/step")
	b.ReportMetric(perStep(tracedWall), "µs/step-traced")
	b.ReportMetric(perStep(plainCPU), "cpu-µs/step")
	b.ReportMetric(perStep(tracedCPU), "cpu-µs/step-traced")
	b.ReportMetric(float64(p.DroppedSpans()), "dropped-spans")
	b.ReportMetric(float64(exp.spans.Load())/float64(b.N*pairRuns), "spans/run")
	b.ReportMetric(float64(sum[0].allocs)/float64(b.N*pairRuns), "allocs/run")
	b.ReportMetric(float64(sum[1].allocs)/float64(b.N*pairRuns), "allocs/run-traced")
	b.ReportMetric(float64(sum[0].bytes)/float64(b.N*pairRuns), "B/run")
	b.ReportMetric(float64(sum[1].bytes)/float64(b.N*pairRuns), "B/run-traced")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianDuration(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

func noEnv(string) string { return "" }

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
	p := batched(nil, true, noEnv, &countingExporter{})
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
		obs.flush() // the next run's events do not find this one's queued
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
// processor (to an exporter that counts and drops them). cpu-ns/step is the process's CPU to
// the spans exported, less swayed by other processes than ns/step.
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
	p := batched(nil, true, func(k string) string { return map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "1048576"}[k] }, exp)
	defer func() { _ = p.Shutdown(context.Background()) }()
	o := &Observer{out: p.out(), runs: map[string]*runTrace{}, logf: b.Logf,
		history: func(string) ([]history.Event, error) { return evs, nil }}
	o.out.held = &heldSpans{batcher: p.batcher} // as NewObserver's
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for i := range b.N {
		r := run
		r.RunID = fmt.Sprintf("%s-%d", run.RunID, i)
		for j := range evs {
			o.observe(&r, &evs[j])
		}
		o.out.held.hand() // as the builder does after each batch of events
	}
	if err := p.tp.ForceFlush(context.Background()); err != nil { // the exporter's part counted too
		b.Fatal(err)
	}
	cpu = cputime.Process() - cpu
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
}
