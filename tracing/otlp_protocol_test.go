package tracing

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/otlptest"
)

// TestOTLPProtocols: spans reach a collector over the protocol the variables choose:
// OTEL_EXPORTER_OTLP_PROTOCOL, overridden by OTEL_EXPORTER_OTLP_TRACES_PROTOCOL; grpc when
// neither is set. A receiver of the other protocol on the same port would get nothing, so a
// span that arrives shows the exporter spoke the receiver's protocol.
func TestOTLPProtocols(t *testing.T) {
	tests := []struct {
		name             string
		http             bool
		protocol, traces string
	}{
		{"grpc by default", false, "", ""},
		{"http/protobuf", true, "http/protobuf", ""},
		{"traces protocol wins over the general one", true, "grpc", "http/protobuf"},
		{"grpc for traces, http otherwise", false, "http/protobuf", "grpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rcv := otlptest.Start(t)
			if tt.http {
				rcv = otlptest.StartHTTP(t)
			}
			exportTo(t, rcv)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tt.protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", tt.traces)
			p, err := FromEnv(context.Background(), os.Getenv, nil)
			if err != nil || p == nil {
				t.Fatalf("FromEnv = %v, %v", p, err)
			}
			_, span := p.tp.Tracer("otlp-protocol-test").Start(context.Background(), "probe")
			span.End()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			spans := rcv.Spans()
			if len(spans) != 1 || spans[0].Name != "probe" {
				t.Fatalf("the receiver got %d spans, want the probe", len(spans))
			}
			if got := rcv.Services(); len(got) != 1 || got[0] != "wend" {
				t.Errorf("services %v, want [wend]", got)
			}
		})
	}
}
