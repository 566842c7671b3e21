package backend

import (
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	enumspb "go.temporal.io/api/enums/v1"
)

// TestQueryOnTemporal: wend query --temporal answers from the run's wend history as locally,
// with the same codes for a bad expression and for what the run cannot answer.
func TestQueryOnTemporal(t *testing.T) {
	b, f := newFake(info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil))
	f.events = map[string][]history.Event{"run-1": opened(t)}
	res, err := b.Query("order-1", `run.workflow_id + " " + string(input ?? "none")`)
	if err != nil || string(res.Value) != `"order-1 none"` {
		t.Fatalf("query: %s, %v", res.Value, err)
	}
	if _, err := b.Query("order-1", "inptu"); code(err) != api.CodeBadQuery {
		t.Fatalf("bad expression: %v", err)
	}
	if _, err := b.Query("order-1", "steps.wait.output"); code(err) != api.CodeQueryFailed {
		t.Fatalf("no output yet: %v", err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("a query sent %v", f.calls)
	}
}
