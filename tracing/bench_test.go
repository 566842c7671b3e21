package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// BenchmarkSequentialStepTraced is engine's BenchmarkSequentialStep with spans made and
// exported (to memory, through the batch processor serve uses): the price of traces on the
// step path. Compare with `go test -run '^$' -bench Step ./interpreter/engine/`.
func BenchmarkSequentialStepTraced(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("traced=%v", traced), func(b *testing.B) { sequentialSteps(b, traced) })
	}
}

func sequentialSteps(b *testing.B, traced bool) {
	const steps = 200
	var src strings.Builder
	src.WriteString("wend: v1\nname: seq\nplugins: {p: ./p}\nsteps:\n")
	for i := range steps {
		fmt.Fprintf(&src, "  - {id: s%d, activity: p.echo, with: {i: %d}}\n", i, i)
	}
	store := history.NewMemStore()
	opts := engine.Options{Store: store, Activities: &acts{}, MaxActivities: 512}
	var p *Provider
	if traced {
		exp := tracetest.NewInMemoryExporter()
		p = &Provider{tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithIDGenerator(historyIDs{}))}
		obs := p.NewObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, nil)
		opts.Observe, opts.TraceContext = obs.Observe, true
		defer func() { _ = p.Shutdown(context.Background()) }()
	}
	e := engine.New(opts)
	defer e.Close()
	var took time.Duration
	for i := range b.N {
		id := fmt.Sprintf("seq%d", i)
		if _, _, err := e.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: "seq.wend.yaml", Source: src.String(), Input: json.RawMessage("null")}); err != nil {
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
