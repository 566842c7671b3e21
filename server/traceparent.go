package server

import (
	"net/http"

	"github.com/wendflow/wend/interpreter/engine"
)

// withTraceParent takes the W3C `traceparent` header of a start request as the run's trace
// context, unless the body names one itself; the engine checks it.
func withTraceParent(r *http.Request, req *engine.StartRequest) {
	if req.TraceParent == "" {
		req.TraceParent = r.Header.Get("traceparent")
	}
}
