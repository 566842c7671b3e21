package worker

import (
	"testing"

	"github.com/wendflow/wend/testkit/otlptest"
)

// startReceiver starts an OTLP receiver and points the exporter of tracing.FromEnv at it.
func startReceiver(t *testing.T) *otlptest.Receiver {
	t.Helper()
	r := otlptest.Start(t)
	r.Setenv(t)
	return r
}
