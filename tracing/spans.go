package tracing

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wendflow/wend/history"
)

// scopeName is the instrumentation scope of wend's spans.
const scopeName = "github.com/wendflow/wend"

// spanOut is where a finished span goes. wend's spans are made whole after the fact (ids,
// times and attributes all known when the event that ends one is committed), so under the
// SDK's default sampler and limits they are handed to the provider's span processors as
// finished spans (SpanStub.Snapshot, the SDK's public constructor of a ReadOnlySpan): the
// same span the tracer would end, without a live span's lock, copies, and the map it dedupes
// attributes with at End (wend's keys are distinct). A sampler or an attribute limit set in
// the environment sends every span through the tracer instead, which applies them.
type spanOut struct {
	tracer trace.Tracer
	procs  []sdktrace.SpanProcessor // the direct path's; nil: through tracer
	res    *resource.Resource
	blocks *attrBlocks // where spans' attributes are written; nil: fresh slices
	// held, when set, keeps the spans for its batcher (procs' only one) until handed over.
	held *heldSpans
}

// heldSpans are the spans an observer built and has not yet handed to its batch processor:
// handed over at the end of a batch of events, or heldMax at a time, a lock each time, not
// a lock a span.
type heldSpans struct {
	batcher *spanBatcher
	spans   []sdktrace.ReadOnlySpan
}

const heldMax = 256

func (h *heldSpans) add(s sdktrace.ReadOnlySpan) {
	if h.spans = append(h.spans, s); len(h.spans) >= heldMax {
		h.hand()
	}
}

// hand hands the spans held to the batcher.
func (h *heldSpans) hand() {
	if h == nil || len(h.spans) == 0 {
		return
	}
	h.batcher.onEnds(h.spans)
	clear(h.spans)
	h.spans = h.spans[:0]
}

func (p *Provider) out() spanOut {
	return spanOut{tracer: p.tp.Tracer(scopeName), procs: p.direct, res: p.res, blocks: p.blocks}
}

// emit exports one span of trace traceID with the given ids, times and attributes. attrs
// is the caller's to reuse: the span keeps a copy, in a block of s's when it has them.
func (s spanOut) emit(traceID [16]byte, parent trace.SpanContext, spanID [8]byte, name string,
	start, end time.Time, attrs []attribute.KeyValue, failure *history.Failure) {
	if failure != nil {
		attrs = append(attrs, attribute.String("wend.failure.category", failure.Category),
			attribute.String("wend.failure.type", failure.Type), attribute.String("wend.failure.message", failure.Message))
	}
	if s.procs == nil {
		s.start(traceID, parent, spanID, name, start, end, slices.Clone(attrs), failure)
		return
	}
	// The default sampler, parent-based always-on: a span is sampled unless its parent is not.
	flags := trace.FlagsSampled
	if parent.IsValid() {
		if !parent.IsSampled() {
			return
		}
		flags |= parent.TraceFlags()
	}
	if start.IsZero() { // as the tracer does: a span without a time starts and ends now
		start = time.Now()
	}
	if end.IsZero() {
		end = start.Add(time.Since(start))
	}
	kept := append(s.blocks.get(len(attrs)), attrs...)
	stub := tracetest.SpanStub{
		Name: name,
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID,
			TraceFlags: flags, TraceState: parent.TraceState()}),
		Parent:               parent,
		SpanKind:             trace.SpanKindInternal,
		StartTime:            start,
		EndTime:              end,
		Attributes:           kept,
		Resource:             s.res,
		InstrumentationScope: instrumentation.Scope{Name: scopeName},
	}
	if failure != nil {
		stub.Status = sdktrace.Status{Code: codes.Error, Description: failure.Error()}
	}
	span := stub.Snapshot()
	if s.held != nil {
		s.held.add(span)
		return
	}
	for _, p := range s.procs {
		p.OnEnd(span)
	}
}

// start is emit through the tracer: a span started and ended at once.
func (s spanOut) start(traceID [16]byte, parent trace.SpanContext, spanID [8]byte, name string,
	start, end time.Time, attrs []attribute.KeyValue, failure *history.Failure) {
	ctx := withIDs(context.Background(), traceID, spanID)
	if parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	}
	_, span := s.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if failure != nil {
		span.SetStatus(codes.Error, failure.Error())
	}
	span.End(trace.WithTimestamp(end))
}

// tracerVars are the variables under which spans go through the tracer: the sampler's, and
// the attribute limits' (the SDK reads them; the direct path would ignore them).
var tracerVars = []string{"OTEL_TRACES_SAMPLER", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
	"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT"}

// newProvider is a provider exporting through procs, with resource res (the SDK's default
// when nil). direct hands finished spans to procs (spanOut); false makes every span through
// the SDK's tracer.
func newProvider(res *resource.Resource, direct bool, procs ...sdktrace.SpanProcessor) *Provider {
	opts := []sdktrace.TracerProviderOption{sdktrace.WithIDGenerator(historyIDs{})}
	if res != nil {
		opts = append(opts, sdktrace.WithResource(res))
		res, _ = resource.Merge(resource.Environment(), res) // the resource WithResource gives the tracer's spans
	} else {
		res = resource.Default()
	}
	for _, sp := range procs {
		opts = append(opts, sdktrace.WithSpanProcessor(sp))
	}
	p := &Provider{tp: sdktrace.NewTracerProvider(opts...), res: res}
	if direct {
		p.direct = procs
	}
	return p
}
