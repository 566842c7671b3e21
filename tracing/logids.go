package tracing

import (
	"encoding/hex"

	"github.com/wendflow/wend/internal/tracecontext"
)

// LogIDs are the trace id and span id, in hex, of a W3C traceparent (a try's, as TryParent
// makes it): what a log line about the try carries as trace_id and span_id. ok is false for
// an empty or malformed one.
func LogIDs(traceparent string) (traceID, spanID string, ok bool) {
	tp, err := tracecontext.Parse(traceparent)
	if err != nil {
		return "", "", false
	}
	return tp.TraceIDString(), hex.EncodeToString(tp.SpanID[:]), true
}
