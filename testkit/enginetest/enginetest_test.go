package enginetest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

const chargeSpec = `wend: v1
name: pay
plugins: {p: ./p}
steps:
  - {id: charge, activity: p.charge, with: {amount: 2}, retry: {tries: 1}}
output: "${{ steps.charge.output }}"
`

// run starts chargeSpec on e and returns its closed record.
func run(t *testing.T, e *engine.Engine, id string) history.Run {
	t.Helper()
	ctx := context.Background()
	if _, _, err := e.Start(ctx, engine.StartRequest{WorkflowID: id, SpecFile: "pay.wend.yaml", Source: chargeSpec, Input: json.RawMessage("null")}); err != nil {
		t.Fatal(err)
	}
	rec, err := e.WaitClosed(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestNewRunsOnItsDefaults: an engine from zero options has a store and activities that
// echo, so a run completes with its activity's input as output.
func TestNewRunsOnItsDefaults(t *testing.T) {
	e := enginetest.New(t, engine.Options{})
	rec := run(t, e, "pay")
	last, err := e.LastEvent(rec.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var closed history.Closed
	_ = json.Unmarshal(last.Data, &closed)
	if rec.Status != history.StatusCompleted || string(closed.Output) != `{"amount":2}` {
		t.Fatalf("run %s with output %s, want completed with {\"amount\":2}", rec.Status, closed.Output)
	}
}

// TestOutageFailsChargeWhileDown: Outage's charge fails while Down is set and echoes once
// it is cleared.
func TestOutageFailsChargeWhileDown(t *testing.T) {
	acts := &enginetest.Outage{}
	acts.Down.Store(true)
	e := enginetest.New(t, engine.Options{Activities: acts})
	if rec := run(t, e, "down"); rec.Status != history.StatusFailed {
		t.Fatalf("run while down %s, want failed", rec.Status)
	}
	acts.Down.Store(false)
	if rec := run(t, e, "up"); rec.Status != history.StatusCompleted {
		t.Fatalf("run once up %s, want completed", rec.Status)
	}
}
