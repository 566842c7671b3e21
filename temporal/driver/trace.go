package driver

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/tracing/traceparent"
)

// childTrace is the traceparent a child run starts with: in its parent's trace under the
// parent's run_workflow step, as locally, when the parent was started with one or is traced
// by this worker (traced: its trace is then derived from its run id). Otherwise none:
// workflow code that exports nothing never invents a trace context the plugins would then
// get. Temporal does not compare a child's input on replay, so a worker that traces and one
// that does not replay the same history.
func childTrace(parent history.Started, step string, traced bool) string {
	if parent.TraceParent == "" && !traced {
		return ""
	}
	return traceparent.ForChild(parent.RunID, parent.TraceParent, step)
}
