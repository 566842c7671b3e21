package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// historyIDs is the provider's id generator: it hands out the ids the observer put in the
// span's context, so a span's ids are functions of the run (internal/tracecontext), never
// random.
type historyIDs struct{}

type idsKey struct{}

type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, traceID trace.TraceID, spanID trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, wantIDs{traceID, spanID})
}

func (historyIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	w, _ := ctx.Value(idsKey{}).(wantIDs)
	return w.trace, w.span
}

func (historyIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	w, _ := ctx.Value(idsKey{}).(wantIDs)
	return w.span
}
