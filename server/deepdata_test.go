package server

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/spec"
)

// forkSpec's input schema doubles validation work per level of a list that fails at its leaf:
// both anyOf branches recurse into the same items.
const forkSpec = `wend: v1
name: fork
input:
  $ref: "#/$defs/fork"
  $defs:
    fork:
      anyOf:
        - type: integer
        - {type: array, items: {$ref: "#/$defs/fork"}}
        - {type: array, items: {$ref: "#/$defs/fork"}}
steps: [{delay: 1h}]
`

func deepList(n int, leaf string) string {
	return strings.Repeat("[", n) + leaf + strings.Repeat("]", n)
}

// Input and signal data nested deeper than spec.MaxDataDepth are a 413 before any schema
// runs: the 20 KB request 9,990 deep that kept a server busy for minutes is refused at once.
func TestDeepDataRefusedWhereItEnters(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	code, b := f.do("POST", "/v1/runs", f.startBody("deep", deepList(9990, "1")), nil)
	wantError(t, code, b, http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		"start: the input nests arrays and objects deeper than 64 levels (at byte 64)")
	f.start("order-1", `{"who":"ann"}`)
	f.waitFor("order-1", waitingForSignal)
	code, b = f.do("POST", "/v1/runs/order-1/signals", `{"name":"approve","data":`+deepList(65, "1")+`}`, nil)
	wantError(t, code, b, http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		"signal approve: the signal data nests arrays and objects deeper than 64 levels (at byte 64)")
	if _, err := f.srv.Show("deep"); err == nil {
		t.Fatal("the refused start was recorded")
	}
}

// A start whose client has gone away stops validating its input, and nothing is recorded; a
// costly validation stops at its budget as a 400 naming it.
func TestStartValidationStops(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	req := func(id string) engine.StartRequest {
		return engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, "fork.wend.yaml"),
			Source: forkSpec, Input: json.RawMessage(deepList(40, `"x"`))}
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.srv.Start(gone, req("gone")); err == nil || !strings.Contains(err.Error(), "validate input: "+context.Canceled.Error()) {
		t.Fatalf("start with its client gone: %v", err)
	}
	body, _ := json.Marshal(req("costly"))
	code, b := f.do("POST", "/v1/runs", string(body), nil)
	if code != http.StatusBadRequest || !strings.Contains(string(b), spec.ErrSchemaBudget.Error()) {
		t.Fatalf("costly input: %d %s", code, b)
	}
	for _, id := range []string{"gone", "costly"} {
		if _, err := f.srv.Show(id); err == nil {
			t.Fatalf("the refused start %s was recorded", id)
		}
	}
}
