package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/tracing"
	"go.temporal.io/sdk/testsuite"
)

// TestTryLogLines: a try that did not complete in a run with a trace gets a worker line
// naming the run, step and try, with the trace_id and span_id of the try's span (those the
// plugin got in its traceparent); a completed try, or one with no trace, gets none.
func TestTryLogLines(t *testing.T) {
	refused := &history.ActivityError{Type: "Refused", Message: "card\ndeclined"}
	for _, tc := range []struct {
		name     string
		runTrace string
		traces   bool
		err      error
		line     bool
	}{
		{"failed, started with a traceparent", accepted, false, refused, true},
		{"failed, traced by the worker", "", true, refused, true},
		{"failed, no trace", "", false, refused, false},
		{"completed", accepted, true, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *tracing.Provider
			if tc.traces {
				startReceiver(t)
				var err error
				if p, err = tracing.FromEnv(context.Background(), os.Getenv, io.Discard); err != nil || p == nil {
					t.Fatalf("FromEnv = %v, %v", p, err)
				}
				defer shutdown(t, p)
			}
			var log bytes.Buffer
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			(&Activities{Plugins: &fakePlugins{out: json.RawMessage(`1`), err: tc.err}, Traces: p, Log: &log}).Register(env)
			call := history.ActivityCall{Plugin: "pay", Activity: "charge", WorkflowID: "order-1", RunID: "r1",
				StepPath: "steps[1]", ActivityExecutionID: "e1", Attempt: 2}
			_, _ = env.ExecuteActivity(wire.ActivityCall, wire.Call{ActivityCall: call, Workflow: "order", RunTraceParent: tc.runTrace})

			got := log.String()
			if !tc.line {
				if got != "" {
					t.Fatalf("logged %q, want nothing", got)
				}
				return
			}
			traceID, spanID, _ := tracing.LogIDs(tracing.TryParent("r1", tc.runTrace, "e1", 2))
			want := "wend worker: run r1 (order-1) steps[1]: try 2 of pay.charge failed: Refused: card declined trace_id=" +
				traceID + " span_id=" + spanID + "\n"
			if got != want {
				t.Errorf("logged\n%q\nwant\n%q", got, want)
			}
			if tc.runTrace != "" && !strings.Contains(got, "trace_id=4bf92f3577b34da6a3ce929d0e0e4736") {
				t.Errorf("line %q is not in the accepted trace", got)
			}
		})
	}
}
