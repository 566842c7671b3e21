package main

import (
	"context"
	"io"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/tracing"
)

// TestWorkflowOptions: the workflow gets a span recorder exactly when the worker exports
// traces, so a worker without traces exports no run or step span and adds no trace ids.
func TestWorkflowOptions(t *testing.T) {
	if o := workflowOptions(nil); o.Spans != nil {
		t.Errorf("no traces: the workflow got a span recorder")
	}
	env := map[string]string{"OTEL_TRACES_EXPORTER": "console"}
	p, err := tracing.FromEnv(context.Background(), func(k string) string { return env[k] }, io.Discard)
	if err != nil || p == nil {
		t.Fatalf("FromEnv = %v, %v", p, err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	o := workflowOptions(p)
	if o.Spans == nil {
		t.Fatal("traces: the workflow got no span recorder")
	}
	s := o.Spans(history.Run{Name: "w", WorkflowID: "w", RunID: "r1"}, history.Event{Type: history.WorkflowStarted,
		Data: history.MustData(history.Started{RunID: "r1"})})
	if rs, ok := s.(*tracing.RunSpans); !ok || rs == nil {
		t.Errorf("the span recorder is %T %v, want the provider's RunSpans", s, s)
	}
}
