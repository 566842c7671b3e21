package traceparent

import (
	"encoding/hex"
	"testing"

	"github.com/wendflow/wend/internal/tracecontext"
)

// TestIDs: the ids a run's log lines carry are those of the span the run gets: in the
// accepted trace when there is one, else the run's derived trace.
func TestIDs(t *testing.T) {
	const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct{ name, accepted string }{{"accepted", accepted}, {"derived", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			run, _ := tracecontext.ForRun("r1", tc.accepted)
			runSpan := tracecontext.RunSpanID("r1")
			if traceID, spanID := RunIDs("r1", tc.accepted); traceID != run.TraceIDString() || spanID != hex.EncodeToString(runSpan[:]) {
				t.Errorf("RunIDs = %s %s, want %s %x", traceID, spanID, run.TraceIDString(), runSpan)
			}
		})
	}
	if traceID, _ := RunIDs("r1", accepted); traceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("RunIDs trace %s, want the accepted one", traceID)
	}
}
