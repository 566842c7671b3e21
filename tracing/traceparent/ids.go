package traceparent

import (
	"encoding/hex"

	"github.com/wendflow/wend/internal/tracecontext"
)

// RunIDs are the trace id and the run span's id, in hex, of run runID started with the
// traceparent accepted (none: its trace is derived from the run id): what the run's log lines
// carry as trace_id and span_id to join them to its spans.
func RunIDs(runID, accepted string) (traceID, spanID string) {
	tp, _ := tracecontext.ForRun(runID, accepted)
	id := tracecontext.RunSpanID(runID)
	return tp.TraceIDString(), hex.EncodeToString(id[:])
}
