package traceparent

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/internal/tracecontext"
)

// TestForChild: a child's traceparent is in its parent's trace (the accepted one's, else the
// parent's derived trace), its span the parent's run_workflow step's, and parses.
func TestForChild(t *testing.T) {
	const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct{ name, accepted string }{{"accepted", accepted}, {"derived", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			got := ForChild("r1", tc.accepted, "steps[2]")
			p, err := tracecontext.Parse(got)
			if err != nil {
				t.Fatalf("ForChild = %q: %v", got, err)
			}
			run, _ := tracecontext.ForRun("r1", tc.accepted)
			if p.TraceID != run.TraceID || p.SpanID != tracecontext.ChildSpanID("r1", "steps[2]") {
				t.Fatalf("ForChild = %q, want trace %s under the step's span", got, run.TraceIDString())
			}
			if tc.accepted != "" && !strings.Contains(got, "4bf92f3577b34da6a3ce929d0e0e4736") {
				t.Fatalf("ForChild = %q, not in the accepted trace", got)
			}
			if other := ForChild("r1", tc.accepted, "steps[3]"); other == got {
				t.Fatalf("two steps share the child traceparent %q", got)
			}
		})
	}
}
