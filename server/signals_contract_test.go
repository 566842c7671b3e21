package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/spec"
)

const contractSpec = `wend: v1
name: contract
signals:
  approve:
    schema: {type: object, required: [by], properties: {by: {type: string}}}
steps:
  - id: a
    wait_for_signal: approve
output: "${{ steps.a.output.by }}"
`

// TestSignalContractRefusals: an undeclared signal is 404 unknown_signal, data failing the
// declared schema 400 invalid_signal naming the field, and the run's history is exactly what
// it was before either; a good signal then completes the run.
func TestSignalContractRefusals(t *testing.T) {
	store := history.NewMemStore()
	f := newFixture(t, store)
	body, _ := json.Marshal(engine.StartRequest{WorkflowID: "c", SpecFile: filepath.Join(f.dir, "c.wend.yaml"), Source: contractSpec})
	var st api.Started
	if code, b := f.do("POST", "/v1/runs", string(body), &st); code != http.StatusCreated {
		t.Fatalf("start: %d %s", code, b)
	}
	f.waitFor("c", waitingForSignal)
	before, err := store.Events(st.Run.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, body string
		status     int
		code, frag string
	}{
		{"undeclared", `{"name":"aprove","data":{"by":"ann"}}`, 404, api.CodeUnknownSignal, `signal "aprove" is not declared by workflow contract (did you mean "approve"?)`},
		{"missing field", `{"name":"approve","data":{}}`, 400, api.CodeBadSignal, `data.by: missing required property`},
		{"wrong type", `{"name":"approve","data":{"by":7},"id":"s-1"}`, 400, api.CodeBadSignal, `data.by: `},
		{"no data", `{"name":"approve"}`, 400, api.CodeBadSignal, `data: expected object, got null`},
	} {
		code, b := f.do("POST", "/v1/runs/c/signals", c.body, nil)
		wantError(t, code, b, c.status, c.code, c.frag)
	}
	after, err := store.Events(st.Run.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("refused signals changed the history: %d events before, %d after", len(before), len(after))
	}
	// The Go API's errors match the spec's sentinels, for callers that branch on them.
	if _, err := f.srv.Signal(t.Context(), "c", "nope", nil); !errors.Is(err, spec.ErrUndeclaredSignal) {
		t.Fatalf("Signal undeclared: %v", err)
	}
	var sent api.SignalSent
	if code, b := f.do("POST", "/v1/runs/c/signals", `{"name":"approve","data":{"by":"ann"},"id":"s-1"}`, &sent); code != 200 || sent.Duplicate {
		t.Fatalf("good signal: %d %s", code, b)
	}
	// The refused send with id s-1 left no trace: the good one under that id is not a duplicate,
	// and its resend is (over HTTP).
	if code, b := f.do("POST", "/v1/runs/c/signals", `{"name":"approve","data":{"by":"ann"},"id":"s-1"}`, &sent); code != 200 || !sent.Duplicate {
		t.Fatalf("resend: %d %s", code, b)
	}
	var o api.Outcome
	if code, b := f.do("GET", "/v1/runs/c/wait?timeout=5s", "", &o); code != 200 || !o.Closed || string(o.Output) != `"ann"` {
		t.Fatalf("wait: %d %s", code, b)
	}
}
