package tracing

import (
	"encoding/hex"
	"testing"

	"github.com/wendflow/wend/testkit/otlptest"
)

// exportTo points the OTLP exporter at r, under the default service name.
func exportTo(t *testing.T, r *otlptest.Receiver) {
	r.Setenv(t)
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
}

func hexID(b []byte) string { return hex.EncodeToString(b) }
