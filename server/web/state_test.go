package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
)

const stateSpec = `wend: v1
name: approve
steps:
  - id: approve
    wait_for_signal: approve
    set: {approved_by: "${{ signal.by }}"}
  - id: ship
    wait_for_signal: shipped
`

// TestRunState: GET /v1/runs/{id} and the run page give the live run's current public
// state and the data of signals received and not yet taken.
func TestRunState(t *testing.T) {
	f := newWebFixture(t)
	f.start("s1", stateSpec)
	for _, sig := range []struct{ name, data string }{{"approve", `{"by":"ann"}`}, {"note", `{"text":"rush"}`}} {
		if _, err := f.srv.Signal(context.Background(), "s1", sig.name, json.RawMessage(sig.data)); err != nil {
			t.Fatal(err)
		}
	}
	f.settle("s1", func(d api.RunDetail) bool { return len(d.Waits) == 1 && d.Waits[0].Signal == "shipped" })

	code, _, body := f.send(req{Method: "GET", Path: "/v1/runs/s1", Header: bearer()})
	var d api.RunDetail
	if err := json.Unmarshal([]byte(body), &d); code != 200 || err != nil {
		t.Fatalf("GET /v1/runs/s1: %d %v %.300s", code, err, body)
	}
	if string(d.State) != `{"approved_by":"ann"}` || len(d.Signals) != 1 || string(d.Signals[0].Data) != `{"text":"rush"}` {
		t.Errorf("state %s, pending signals %+v", d.State, d.Signals)
	}

	code, _, page := f.send(req{Method: "GET", Path: "/ui/runs/s1", Session: true})
	if code != 200 {
		t.Fatalf("run page: %d", code)
	}
	for _, want := range []string{`id="run-state"`, `&#34;approved_by&#34;: &#34;ann&#34;`, `&#34;text&#34;: &#34;rush&#34;`} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %s", want)
		}
	}
}
