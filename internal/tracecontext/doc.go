// Package tracecontext owns the W3C trace context of a run: parsing and writing a
// `traceparent` header, and the trace and span ids wend derives for a run, its steps and
// their tries.
//
// The ids are functions of what the history holds (the run id, the accepted traceparent, an
// activity step's execution id and a try's attempt), never random, so the spans one process
// emits and the spans another emits for the same run after a restart join one tree, and the
// traceparent a plugin gets names the span its try's span will have. Standard library only:
// the engine and the command line share it without pulling in OpenTelemetry, which only
// package tracing imports.
package tracecontext
