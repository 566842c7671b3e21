package arch

// tracing/traceparent derives trace context values without OpenTelemetry, for workflow code
// on Temporal (temporal/driver) that may link no exporter.
func init() {
	allowed["tracing/traceparent"] = []string{"internal/tracecontext"}
}
