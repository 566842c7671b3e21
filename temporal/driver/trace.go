package driver

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/tracing/traceparent"
)

// childTrace is the traceparent a child run starts with: in its parent's trace under the
// parent's run_workflow step, as locally, when the parent was started with one. A parent
// without one gives its child none: workflow code cannot know whether the workers export
// traces, so it never invents a trace context the plugins would then get.
func childTrace(parent history.Started, step string) string {
	if parent.TraceParent == "" {
		return ""
	}
	return traceparent.ForChild(parent.RunID, parent.TraceParent, step)
}
