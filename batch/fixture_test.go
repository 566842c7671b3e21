package batch_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/testkit/enginetest"
	"github.com/wendflow/wend/testkit/httpcall"
)

// waitSpec greets input.who, then waits for the signal approve.
const waitSpec = `wend: v1
name: approval
plugins: {demo: ./demo}
steps:
  - id: greet
    activity: demo.echo
    with: {hi: "${{ input.who }}"}
  - id: approve
    wait_for_signal: approve
`

// chargeSpec reserves, then charges (which enginetest.Outage fails while down).
const chargeSpec = `wend: v1
name: pay
plugins: {p: ./p}
steps:
  - {id: reserve, activity: p.reserve, with: 1}
  - {id: charge, activity: p.charge, with: 2}
output: "${{ [steps.reserve.output, steps.charge.output] }}"
`

// fixture is a server over an engine and its store, served over HTTP.
type fixture struct {
	t   *testing.T
	srv *server.Server
	hs  *httptest.Server
	dir string
}

func newFixture(t *testing.T, store history.Store) *fixture {
	f, _ := newFixtureActs(t, store)
	return f
}

// newFlakyFixture is a fixture whose charge activity fails until acts.Down is cleared.
func newFlakyFixture(t *testing.T) (*fixture, *enginetest.Outage) {
	return newFixtureActs(t, history.NewMemStore())
}

func newFixtureActs(t *testing.T, store history.Store) (*fixture, *enginetest.Outage) {
	t.Helper()
	acts := &enginetest.Outage{}
	acts.Down.Store(true)
	_, srv := apptest.Over(t, store, acts)
	return serve(t, srv), acts
}

func serve(t *testing.T, srv *server.Server) *fixture {
	f := &fixture{t: t, srv: srv, dir: t.TempDir()}
	f.hs = httptest.NewServer(f.srv)
	t.Cleanup(f.hs.Close)
	return f
}

// withBatches gives f's server batches over st; they stop with the test.
func (f *fixture) withBatches(st *batch.MemStore) *batch.Runner {
	f.t.Helper()
	return apptest.Batches(f.t, f.srv, st)
}

// do sends a request to the fixture's server (httpcall.Do).
func (f *fixture) do(method, path, body string, out any) (int, string) {
	f.t.Helper()
	return httpcall.Do(f.t, f.hs.URL, method, path, body, out)
}

// start starts a run of waitSpec under id.
func (f *fixture) start(id, input string) {
	f.t.Helper()
	body, _ := json.Marshal(engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, "approval.wend.yaml"),
		Source: waitSpec, Input: json.RawMessage(input)})
	if code, b := f.do("POST", "/v1/runs", string(body), nil); code != http.StatusCreated {
		f.t.Fatalf("start: %d %s", code, b)
	}
}

// startSpec starts a run of src under id.
func (f *fixture) startSpec(id, src string) {
	f.t.Helper()
	body, _ := json.Marshal(engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, id+".wend.yaml"), Source: src})
	if code, b := f.do("POST", "/v1/runs", string(body), nil); code != http.StatusCreated {
		f.t.Fatalf("start %s: %d %s", id, code, b)
	}
}

// waitingForSignal polls show until the workflow's newest run waits for a signal.
func (f *fixture) waitingForSignal(id string) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := f.srv.Show(id)
		if err == nil && slices.ContainsFunc(d.Waits, func(w runview.Wait) bool { return w.Kind == runview.WaitSignal }) {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s waits for no signal: %+v, %v", id, d, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// closed waits until the workflow's newest run has closed.
func (f *fixture) closed(id string) history.Run {
	f.t.Helper()
	var o api.Outcome
	if code, b := f.do("GET", "/v1/runs/"+id+"/wait?timeout=5s", "", &o); code != 200 || !o.Closed {
		f.t.Fatalf("wait %s: %d %s", id, code, b)
	}
	return o.Run
}

// wantError checks an error answer: status, code and a message fragment.
func wantError(t *testing.T, code int, body string, wantCode int, wantErr, fragment string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("status %d, want %d: %s", code, wantCode, body)
	}
	e := api.DecodeError(code, []byte(body))
	if e.Code != wantErr || !strings.Contains(e.Message, fragment) {
		t.Fatalf("error %+v, want code %s with %q", e, wantErr, fragment)
	}
}
