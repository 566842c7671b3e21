package backend

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/interpreter/engine"
)

// TestStartKeepsTraceParent: a start's traceparent reaches the run's start input, where the
// driver hands it to each try; a malformed one is refused before any call to the cluster.
func TestStartKeepsTraceParent(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	src := "wend: v1\nname: order\nsteps: [{delay: 1s}]\n"
	for _, tc := range []struct {
		name, traceparent string
		wantCode          string
	}{
		{"kept", tp, ""},
		{"none", "", ""},
		{"malformed", "00-xyz", api.CodeInvalid},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", api.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, f := newFake()
			_, err := b.Start(context.Background(), engine.StartRequest{WorkflowID: "order-1", SpecFile: "/w/o.wend.yaml", Source: src,
				Input: json.RawMessage(`null`), TraceParent: tc.traceparent})
			if tc.wantCode != "" {
				if code(err) != tc.wantCode || !strings.Contains(err.Error(), "traceparent") || len(f.calls) != 0 {
					t.Fatalf("start = %v (code %q), calls %v; want %s naming the traceparent, no call", err, code(err), f.calls, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.input.Started.TraceParent; got != tc.traceparent {
				t.Fatalf("start input traceparent %q, want %q", got, tc.traceparent)
			}
		})
	}
}
