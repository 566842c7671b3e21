// Package tracing exports a run's path as OpenTelemetry spans: one for the run, one per
// step (activity, delay, signal wait, child run) and one per try, configured by the standard
// OTEL_* variables and off unless OTEL_TRACES_EXPORTER names an exporter.
//
// Spans are made from committed history, never from replay: Observer.Observe is the engine's
// Observe hook, which the engine calls once per event after the commit that wrote it, so a
// span is emitted when the event that ends it is committed live, with its start and end times
// taken from the history. A run replayed after a restart re-emits nothing for its old events,
// and the ids (internal/tracecontext) are functions of the run, so spans exported by different
// processes join one tree. Between a commit and the export, a crash loses the spans that
// commit ended: traces are delivered at most once.
//
// Observe never blocks a commit: it queues the event (bounded, QueueSize) for one goroutine
// that builds the spans in commit order. An event that finds the queue full is dropped and
// counted; the run's next event sees the gap in sequence numbers and reads the run's state
// back from its history, so only the dropped event's spans are lost. The spans built wait
// for the exporter in a queue of their own (bounded, OTEL_BSP_MAX_QUEUE_SIZE): a span that
// finds it full is dropped and counted (Provider.DroppedSpans), so an exporter that cannot
// keep up holds up neither the builder nor a commit.
//
// A process that runs tries whose history another one commits (a Temporal worker) exports
// each try's span when it ends with Provider.EmitTry: the same ids, name and attributes as
// the span the observer makes of that try, so the two join one tree. A process that records
// a run's history itself (a Temporal workflow) makes the run's other spans with
// Provider.RunSpans: the observer's builder fed the run's events, only the new ones emitting.
package tracing
