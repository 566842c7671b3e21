package tracing

import (
	"context"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

// TestDirectSpansAreTheTracers: the spans handed finished to the span processors are the
// spans the SDK's tracer makes of the same events, field by field (ids, parent, flags, name,
// kind, times, attributes, status, resource, scope), for runs with tries, retries, failures
// and waits, started in a trace of their own or a caller's, sampled or not.
func TestDirectSpansAreTheTracers(t *testing.T) {
	const waits = "wend: v1\nname: order\nplugins: {p: ./p}\nsteps:\n  - {id: d, delay: 1ms}\n  - {id: a, activity: p.echo, with: 1}\n  - {id: n, wait_for_signal: never, timeout: 1ms, catch: {steps: []}}\n"
	for _, tt := range []struct {
		name, src, traceparent string
		spans                  int // the tracer's count, so a case cannot pass with none on both sides
	}{
		{"tries, a retry and a failure, own trace", workflow, "", 8},
		{"tries, a retry and a failure, caller's trace", workflow, accepted, 8},
		{"caller's trace not sampled", workflow, strings.TrimSuffix(accepted, "01") + "00", 0},
		{"delay, activity and a timed-out signal wait", waits, "", 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := history.NewMemStore()
			e := enginetest.New(t, engine.Options{Store: store, Activities: &acts{}, TraceContext: true})
			run := start(t, e, tt.src, tt.traceparent)
			closed := waitClosed(t, e)
			e.Close()
			evs, err := store.Events(run.RunID, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := finishedSpans(t, true, closed, evs)
			want := finishedSpans(t, false, closed, evs)
			if len(want) != tt.spans {
				t.Fatalf("the tracer made %d spans, want %d", len(want), tt.spans)
			}
			if len(got) != len(want) {
				t.Fatalf("direct: %d spans, tracer: %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("span %q:\ndirect %+v\ntracer %+v", want[i].Name, got[i], want[i])
				}
			}
		})
	}
}

// finishedSpans observes evs of run on a provider whose spans go direct or through the tracer, and
// returns the spans exported, by span id.
func finishedSpans(t *testing.T, direct bool, run history.Run, evs []history.Event) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	p := newProvider(nil, direct, sdktrace.NewSimpleSpanProcessor(exp))
	if (p.out().procs != nil) != direct {
		t.Fatalf("newProvider(direct %v) made a provider whose spans go direct: %v", direct, !direct)
	}
	o := p.NewObserver(func(string) ([]history.Event, error) { return evs, nil }, t.Logf)
	for _, ev := range evs {
		o.Observe(run, ev)
	}
	if err := o.close(context.Background()); err != nil { // every span built (and exported: a simple processor)
		t.Fatal(err)
	}
	spans := exp.GetSpans() // before Shutdown, which empties exp
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(spans, func(a, b tracetest.SpanStub) int {
		return strings.Compare(a.SpanContext.SpanID().String(), b.SpanContext.SpanID().String())
	})
	return spans
}

// TestSamplerOrLimitsTakeTheTracer: spans go direct only under the SDK's default sampler
// and attribute limits; a sampler or a limit in the environment sends them through the
// tracer, which applies it.
func TestSamplerOrLimitsTakeTheTracer(t *testing.T) {
	for _, tt := range []struct {
		name, key, value string
		direct           bool
	}{
		{"defaults", "", "", true},
		{"a sampler", "OTEL_TRACES_SAMPLER", "traceidratio", false},
		{"an attribute value length limit", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "16", false},
		{"a span attribute value length limit", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "16", false},
		{"an attribute count limit", "OTEL_ATTRIBUTE_COUNT_LIMIT", "4", false},
		{"a span attribute count limit", "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "4", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"OTEL_TRACES_EXPORTER": "console", tt.key: tt.value}
			p, err := FromEnv(context.Background(), func(k string) string { return env[k] }, io.Discard)
			if err != nil || p == nil {
				t.Fatalf("FromEnv = %v, %v", p, err)
			}
			defer func() { _ = p.Shutdown(context.Background()) }()
			if got := p.out().procs != nil; got != tt.direct {
				t.Errorf("spans go direct: %v, want %v", got, tt.direct)
			}
		})
	}
}

// TestDirectSpanWithoutTimes: a span whose times are unknown starts and ends when it is
// made, as the tracer's does, not at the zero time.
func TestDirectSpanWithoutTimes(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newProvider(nil, true, sdktrace.NewSimpleSpanProcessor(exp))
	before := time.Now()
	p.out().emit([16]byte{1}, trace.SpanContext{}, [8]byte{1}, "probe", time.Time{}, time.Time{}, nil, nil)
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	if s := spans[0]; s.StartTime.Before(before) || s.EndTime.Before(s.StartTime) {
		t.Errorf("start %v end %v, want both from %v on", s.StartTime, s.EndTime, before)
	}
}
