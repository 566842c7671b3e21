package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/driver"
	"github.com/wendflow/wend/tracing"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayExportsNoSpan: a tracing worker that replays a finished run's Temporal history
// (as after a sticky-cache eviction, a restart, or for a query) exports no span to the OTLP
// receiver: every span of that history was exported when its event was new.
func TestReplayExportsNoSpan(t *testing.T) {
	rcv := startReceiver(t)
	p, err := tracing.FromEnv(context.Background(), os.Getenv, io.Discard)
	if err != nil || p == nil {
		t.Fatalf("FromEnv = %v, %v", p, err)
	}
	// The driver's recorded run: activities, timers and a signal wait.
	raw, err := os.ReadFile("../driver/testdata/histories/order.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := client.HistoryFromJSON(bytes.NewReader(raw), client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ex struct {
		WorkflowID string `json:"workflow_id"`
		RunID      string `json:"run_id"`
	}
	if b, err := os.ReadFile("../driver/testdata/histories/order.execution.json"); err != nil || json.Unmarshal(b, &ex) != nil {
		t.Fatalf("read the recorded run's ids: %v", err)
	}
	fed := 0
	r := sdkworker.NewWorkflowReplayer()
	driver.RegisterWith(r, driver.Options{Spans: func(run history.Run, started history.Event) driver.Spans {
		fed++
		return p.RunSpans(run, started)
	}})
	if err := r.ReplayWorkflowHistoryWithOptions(nil, h, sdkworker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: ex.WorkflowID, RunID: ex.RunID}}); err != nil {
		t.Fatalf("replay: %v", err)
	}
	shutdown(t, p)
	if fed != 1 {
		t.Fatalf("the replay started %d span recorders, want 1", fed)
	}
	if spans := rcv.Spans(); len(spans) != 0 {
		t.Errorf("the replay exported %d spans (first %q), want none", len(spans), spans[0].Name)
	}
}
