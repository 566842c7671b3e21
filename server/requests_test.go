package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// TestOneStartRequest: the API's start body is the engine's StartRequest, so the two
// cannot drift; its JSON is docs/api.md's contract, unchanged from the API's own former type
// (id, workflow, spec_file, source as text, input).
func TestOneStartRequest(t *testing.T) {
	for _, c := range []struct {
		name string
		req  engine.StartRequest
		wire string
	}{
		{"a file", engine.StartRequest{WorkflowID: "order-7", SpecFile: "/w/order.wend.yaml", Source: "wend: v1\n", Input: json.RawMessage(`{"n":1}`)},
			`{"id":"order-7","spec_file":"/w/order.wend.yaml","source":"wend: v1\n","input":{"n":1}}`},
		{"a registered workflow", engine.StartRequest{Workflow: "order", Input: json.RawMessage(`{}`)},
			`{"workflow":"order","input":{}}`},
		{"nothing", engine.StartRequest{}, `{}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.req)
			if err != nil || string(b) != c.wire {
				t.Errorf("wire form %s (%v), want %s", b, err, c.wire)
			}
			var back engine.StartRequest
			if err := json.Unmarshal([]byte(c.wire), &back); err != nil || back.WorkflowID != c.req.WorkflowID ||
				back.Workflow != c.req.Workflow || back.Source != c.req.Source || string(back.Input) != string(c.req.Input) {
				t.Errorf("read back %+v (%v), want %+v", back, err, c.req)
			}
		})
	}
}

// TestEngineRefusesUnresolvedWorkflow: a registered name is the API's to resolve; the
// engine given one says so rather than start nothing.
func TestEngineRefusesUnresolvedWorkflow(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	_, _, err := f.eng.Start(t.Context(), engine.StartRequest{Workflow: "order"})
	if err == nil || !errors.Is(err, engine.ErrUnresolvedWorkflow) {
		t.Errorf("engine start of a registered name: %v", err)
	}
}

// TestOneCancelRequest: cancel and terminate read the history.CancelRequest the run
// records; a client gives its reason, and the fields the path and route decide are refused.
func TestOneCancelRequest(t *testing.T) {
	if b, _ := json.Marshal(history.CancelRequest{Reason: "customer asked"}); string(b) != `{"reason":"customer asked"}` {
		t.Errorf("cancel body %s, want {\"reason\":\"customer asked\"}", b)
	}
	f := newFixture(t, history.NewMemStore())
	f.start("order-1", `{"who":"ann"}`)
	for _, c := range []struct {
		route, body string
		status      int
	}{
		{"cancel", `{"workflow_id":"other"}`, http.StatusBadRequest},
		{"cancel", `{"terminate":true}`, http.StatusBadRequest},
		{"terminate", `{"workflow_id":"other"}`, http.StatusBadRequest},
		{"cancel", `{"reason":"r","extra":1}`, http.StatusBadRequest},
		{"cancel", `{"reason":"customer asked"}`, http.StatusOK},
	} {
		code, body := f.do("POST", "/v1/runs/order-1/"+c.route, c.body, nil)
		if code != c.status {
			t.Errorf("%s %s: %d %s, want %d", c.route, c.body, code, body, c.status)
		}
	}
	r := f.waitFor("order-1", func(d api.RunDetail) bool { return !d.Run.Open() })
	evs, err := f.srv.Events("order-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got *history.CancelRequest
	for _, ev := range evs.Events {
		if ev.Type == history.CancelRequested {
			c, err := history.DataOf[history.CancelRequest](ev)
			if err != nil {
				t.Fatal(err)
			}
			got = &c
		}
	}
	if got == nil || got.Reason != "customer asked" || r.Run.Status != history.StatusCancelled {
		t.Errorf("recorded cancel %+v, run %s; want reason \"customer asked\", cancelled", got, r.Run.Status)
	}
}
