// Package traceparent is the pure part of wend's trace context for code that must not link
// an exporter: workflow code on Temporal (temporal/driver), which is replayed and may touch
// no network. It derives values only; the ids are internal/tracecontext's, so they are the
// ones the tracing package exports.
package traceparent

import "github.com/wendflow/wend/internal/tracecontext"

// ForChild is the traceparent a run_workflow step's child run starts with: the parent run's
// trace (from the traceparent the parent was started with, accepted, or derived from its run
// id when that is empty), the step's span, as the local engine starts a child.
func ForChild(parentRunID, accepted, step string) string {
	return tracecontext.ForChild(parentRunID, accepted, step)
}
