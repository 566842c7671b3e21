package driver

import (
	"encoding/json"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/tracing/traceparent"
	"go.temporal.io/sdk/workflow"
)

// Spans records one run's trace spans from its wend events as the driver records them
// (tracing.RunSpans). live is false for an event Temporal replays (after a sticky-cache
// eviction, on another worker, for a query): its spans were exported when it was new, by the
// worker that ran that workflow task. Record must neither block nor touch workflow state:
// exporting is a side effect outside the workflow, like a log line.
type Spans interface {
	Record(ev history.Event, live bool)
}

// Options configure the workflow RegisterWith registers.
type Options struct {
	// Spans, when set, starts the span recorder of a run from its WorkflowStarted event, and
	// the run's log lines carry its trace ids: the worker exports traces.
	Spans func(run history.Run, started history.Event) Spans
}

// RegisterWith registers the workflow as wire.WorkflowType, configured by o.
func RegisterWith(r Registry, o Options) {
	r.RegisterWorkflowWithOptions(func(ctx workflow.Context, in wire.StartInput) (json.RawMessage, error) {
		return host(ctx, in, o)
	}, workflow.RegisterOptions{Name: wire.WorkflowType})
}

// traceFrom hands the recorded events from index from on to the run's span recorder, the
// first of them (WorkflowStarted) starting it; live says whether they are new.
func (d *driver) traceFrom(from int, live bool) {
	if d.opts.Spans == nil {
		return
	}
	for _, ev := range d.events[from:] {
		if d.spans == nil {
			d.spans = d.opts.Spans(history.Run{Name: d.w.Name, WorkflowID: d.st.WorkflowID, RunID: d.st.RunID}, ev)
			continue
		}
		d.spans.Record(ev, live)
	}
}

// warn logs a warning about the run through the workflow's logger (which Temporal keeps
// quiet on replay). The line carries the run's trace_id and span_id (its run span) when the
// run has a trace: started with a traceparent, or traced by this worker.
func (d *driver) warn(msg string, keyvals ...any) {
	if d.st.TraceParent != "" || d.opts.Spans != nil {
		traceID, spanID := traceparent.RunIDs(d.st.RunID, d.st.TraceParent)
		keyvals = append(keyvals, "trace_id", traceID, "span_id", spanID)
	}
	workflow.GetLogger(d.ctx).Warn(msg, keyvals...)
}
