package tracing

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
)

// Try is one try of an activity step that a process ran without committing its history: a
// Temporal worker's plugin call, whose events the Temporal workflow records.
type Try struct {
	Workflow string               // the workflow's name (wend.workflow)
	Call     history.ActivityCall // the try as the worker got it; Call.TraceParent names its trace
	// Start is when the try became due, End when it ended.
	Start, End time.Time
	// Outcome is completed, failed, timed_out, interrupted or cancelled, as locally.
	Outcome      string
	Failure      *history.Failure // as the run's history records it; nil on success
	PluginSHA256 string           // the build that served it, when known
}

// TryParent is the W3C traceparent of a try: the run's trace (from the traceparent the run
// was started with, else derived from its run id), the try's span. It is the value the local
// engine passes to a plugin, so a process that runs tries elsewhere passes the same.
func TryParent(runID, accepted, execID string, attempt int) string {
	return tracecontext.ForTry(runID, accepted, execID, attempt)
}

// ValidTraceParent checks a traceparent a run is to be started with.
func ValidTraceParent(s string) error {
	_, err := tracecontext.Parse(s)
	return err
}

// EmitTry exports the span of one try, with the ids and attributes the local engine's span
// of the same try has: in the trace of Call.TraceParent (derived from the run id when it is
// empty or malformed), under its step's span. Each call exports one span; the caller calls it
// once per try it ran, so a try is exported at most once.
func (p *Provider) EmitTry(t Try) {
	if p == nil {
		return
	}
	c := t.Call
	tp, _ := tracecontext.ForRun(c.RunID, "")
	if parsed, err := tracecontext.Parse(c.TraceParent); err == nil {
		tp = parsed
	}
	st := &stepTrace{path: c.StepPath, plugin: c.Plugin, activity: c.Activity}
	out := p.out()
	var buf attrBuf
	attrs := withStep(runAttrs(buf[:0], &history.Run{Name: t.Workflow, WorkflowID: c.WorkflowID, RunID: c.RunID}), st)
	attrs = append(attrs, attribute.Int("wend.attempt", c.Attempt), attribute.String("wend.outcome", t.Outcome))
	if t.PluginSHA256 != "" {
		attrs = append(attrs, attribute.String("wend.plugin_sha256", t.PluginSHA256))
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tp.TraceID,
		SpanID: tracecontext.StepSpanID(c.RunID, c.ActivityExecutionID), TraceFlags: trace.TraceFlags(tp.Flags)})
	out.emit(tp.TraceID, parent,
		tracecontext.TrySpanID(c.RunID, c.ActivityExecutionID, c.Attempt),
		tryName(c.Plugin, c.Activity, c.Attempt), t.Start, t.End, attrs, t.Failure)
}
