// Package otlptest is an OTLP trace collector for tests, over gRPC (Start) or HTTP with
// protobuf bodies (StartHTTP): it listens on a local port, keeps the spans (and the service
// names) it is sent, and gives the OTEL_* variables that point an exporter configured by
// tracing.FromEnv at it, for this process or for a child process.
package otlptest

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// Receiver is a running collector; Start makes one.
type Receiver struct {
	collectorpb.UnimplementedTraceServiceServer
	addr string
	// protocol is the OTEL_EXPORTER_OTLP_PROTOCOL that reaches it: grpc or http/protobuf.
	protocol string

	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

// Start starts a Receiver on 127.0.0.1, stopped when the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{addr: ln.Addr().String(), protocol: "grpc"}
	srv := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

// Env is the OTEL_* variables, as KEY=VALUE, that make an exporter send to r, batching for
// 20 ms only so a test does not wait for spans.
func (r *Receiver) Env() []string {
	return []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + r.addr,
		"OTEL_EXPORTER_OTLP_INSECURE=true", "OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_EXPORTER_OTLP_PROTOCOL=" + r.protocol}
}

// Setenv sets Env in this process for the rest of the test.
func (r *Receiver) Setenv(t *testing.T) {
	for _, kv := range r.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Export keeps the spans of req and the service.name of each resource.
func (r *Receiver) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				r.services = append(r.services, kv.Value.GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

// Spans returns the spans received so far, in the order they came.
func (r *Receiver) Spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// Services returns the service.name of each resource received so far.
func (r *Receiver) Services() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.services...)
}

// Attr returns span s's attribute key as Text, or "" when s has none.
func Attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return Text(kv.Value)
		}
	}
	return ""
}

// Text is an attribute value as text: a string as it is, an integer in decimal, anything else
// in its protobuf text form.
func Text(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	}
	return v.String()
}
