// Package tracing exports a run's path as OpenTelemetry spans: one for the run, one per
// activity step and one per try, configured by the standard OTEL_* variables and off unless
// OTEL_TRACES_EXPORTER names an exporter.
//
// Spans are made from committed history, never from replay: Observer is the engine's Observe
// hook, which the engine calls once per event after the commit that wrote it, so a span is
// emitted when the event that ends it is committed live, with its start and end times taken
// from the history. A run replayed after a restart re-emits nothing for its old events, and the
// ids (internal/tracecontext) are functions of the run, so spans exported by different
// processes join one tree. Between a commit and the export, a crash loses the spans that
// commit ended: traces are delivered at most once.
package tracing
