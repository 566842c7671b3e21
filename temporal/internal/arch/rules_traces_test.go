package arch

// Traces: the worker exports a span per plugin try and the binary configures the exporter
// from OTEL_*, both through the main module's tracing package (which alone imports
// OpenTelemetry). Runs after rules_cli_test.go's init (files init in name order), whose lists
// it extends.
func init() {
	allowed["worker"] = append(allowed["worker"], wend+"/tracing")
	allowed["cmd/wend-temporal"] = append(allowed["cmd/wend-temporal"], wend+"/tracing")
}

// The backend checks a start's traceparent as a local start does.
func init() { allowed["backend"] = append(allowed["backend"], wend+"/tracing") }

// The driver starts a child in its parent's trace through tracing/traceparent, which derives
// values only (no exporter, no network) with internal/tracecontext's pure functions.
func init() {
	allowed["driver"] = append(allowed["driver"], wend+"/tracing/traceparent")
	reachable = append(reachable, wend+"/internal/tracecontext")
}

// The binary hands the driver its span recorder (tracing.Provider.RunSpans), a function of
// a run and its WorkflowStarted event: history names them.
func init() {
	allowed["cmd/wend-temporal"] = append(allowed["cmd/wend-temporal"], wend+"/history")
}

// The binary names step spans by the steps' ids, read from the file a run started with by
// runview.StartedStepIDs, as wend run and serve do.
func init() {
	allowed["cmd/wend-temporal"] = append(allowed["cmd/wend-temporal"], wend+"/runview")
}
