package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/enginetest"
	"github.com/wendflow/wend/testkit/httpcall"
)

const waitSpec = servertest.WaitSpec

const inputSpec = `wend: v1
name: typed
input: {type: object, required: [who]}
steps: [{delay: 1h}]
`

// checkStore is a MemStore that can check itself, like boltstore.
type checkStore struct {
	*history.MemStore
	problems []string
}

func (c checkStore) Check() ([]string, error) { return c.problems, nil }

type fixture struct {
	t   *testing.T
	srv *Server
	hs  *httptest.Server
	eng *engine.Engine
	dir string
}

func newFixture(t *testing.T, store history.Store) *fixture {
	t.Helper()
	return fixtureActs(t, store, servertest.Acts{})
}

// fixtureActs is newFixture with the plugins played by acts.
func fixtureActs(t *testing.T, store history.Store, acts engine.Activities) *fixture {
	t.Helper()
	eng := enginetest.New(t, engine.Options{Store: store, Activities: acts})
	f := &fixture{t: t, srv: New(eng, store), eng: eng, dir: t.TempDir()}
	f.hs = httptest.NewServer(f.srv)
	t.Cleanup(f.hs.Close)
	return f
}

// do sends a request to the fixture's server (httpcall.Do).
func (f *fixture) do(method, path, body string, out any) (int, string) {
	f.t.Helper()
	return httpcall.Do(f.t, f.hs.URL, method, path, body, out)
}

func (f *fixture) start(id, input string) api.Started {
	f.t.Helper()
	body, _ := json.Marshal(engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, "approval.wend.yaml"),
		Source: waitSpec, Input: json.RawMessage(input)})
	var st api.Started
	if code, b := f.do("POST", "/v1/runs", string(body), &st); code != http.StatusCreated {
		f.t.Fatalf("start: %d %s", code, b)
	}
	return st
}

// waitFor polls show until cond holds.
func (f *fixture) waitFor(id string, cond func(api.RunDetail) bool) api.RunDetail {
	f.t.Helper()
	return servertest.Settle(f.t, func() (api.RunDetail, error) { return f.srv.Show(id) }, cond)
}

func waitingForSignal(d api.RunDetail) bool {
	for _, w := range d.Waits {
		if w.Kind == runview.WaitSignal {
			return true
		}
	}
	return false
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

func TestStartSignalWaitRoundTrip(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	st := f.start("order-1", `{"who":"ann"}`)
	if !st.Started || st.Run.WorkflowID != "order-1" || st.Run.Status != history.StatusRunning {
		t.Fatalf("start: %+v", st)
	}

	// docs/reliability.md G8: the same id with the same input returns the existing run, 200 not
	// 201.
	body, _ := json.Marshal(engine.StartRequest{WorkflowID: "order-1", SpecFile: "x.wend.yaml", Source: waitSpec, Input: json.RawMessage(`{ "who": "ann" }`)})
	var again api.Started
	if code, b := f.do("POST", "/v1/runs", string(body), &again); code != http.StatusOK || again.Started || again.Run.RunID != st.Run.RunID {
		t.Fatalf("second start: %d %s", code, b)
	}

	d := f.waitFor("order-1", waitingForSignal)
	if w := d.Waits[len(d.Waits)-1]; w.Signal != "approve" || w.Step != "steps[1]" {
		t.Fatalf("waits: %+v", d.Waits)
	}

	// A wait that times out says closed=false with the current record.
	var o api.Outcome
	if code, b := f.do("GET", "/v1/runs/order-1/wait?timeout=20ms", "", &o); code != 200 || o.Closed || o.Run.RunID != st.Run.RunID {
		t.Fatalf("wait before the signal: %d %s", code, b)
	}

	var sr struct{ Run history.Run }
	if code, b := f.do("POST", "/v1/runs/order-1/signals", `{"name":"approve","data":{"by":"bo"}}`, &sr); code != 200 || sr.Run.RunID != st.Run.RunID {
		t.Fatalf("signal: %d %s", code, b)
	}
	if code, b := f.do("GET", "/v1/runs/order-1/wait?timeout=5s", "", &o); code != 200 || !o.Closed {
		t.Fatalf("wait: %d %s", code, b)
	}
	if o.Run.Status != history.StatusCompleted || string(o.Output) != `{"by":"bo","hi":"ann"}` {
		t.Fatalf("outcome: %+v output %s", o.Run, o.Output)
	}

	// Signals and cancels to the finished run are refused with a message naming it.
	code, b := f.do("POST", "/v1/runs/order-1/signals", `{"name":"approve"}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeRunClosed,
		"run "+st.Run.RunID+" of order-1 is completed: signals to a finished run are rejected")
	code, b = f.do("POST", "/v1/runs/order-1/cancel", `{}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeRunClosed, "is completed: a finished run cannot be cancelled")

	// The same errors through the Go API match the engine's sentinels.
	if _, err := f.srv.Signal(context.Background(), "order-1", "approve", nil); !errors.Is(err, engine.ErrRunClosed) {
		t.Fatalf("Signal on a closed run: %v", err)
	}
}

func TestListShowEvents(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	a := f.start("a", `{"who":"x"}`)
	time.Sleep(2 * time.Millisecond) // distinct start times: newest first is then a-then-b reversed
	b := f.start("parent/steps[0]", `{"who":"y"}`)
	f.waitFor("a", waitingForSignal)

	var list struct{ Runs []history.Run }
	if code, body := f.do("GET", "/v1/runs", "", &list); code != 200 || len(list.Runs) != 2 || list.Runs[0].RunID != b.Run.RunID {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body := f.do("GET", "/v1/runs?workflow_id=a&status=running", "", &list); code != 200 || len(list.Runs) != 1 || list.Runs[0].RunID != a.Run.RunID {
		t.Fatalf("list filtered: %d %s", code, body)
	}
	if code, body := f.do("GET", "/v1/runs?status=completed", "", &list); code != 200 || len(list.Runs) != 0 || !strings.Contains(body, `"runs":[]`) {
		t.Fatalf("list empty: %d %s", code, body)
	}

	// By workflow id, by run id, and a workflow id with a slash (escaped in the path).
	for _, id := range []string{"a", a.Run.RunID} {
		var d api.RunDetail
		if code, body := f.do("GET", "/v1/runs/"+url.PathEscape(id), "", &d); code != 200 || d.Run.RunID != a.Run.RunID ||
			d.Events[0].Type != history.WorkflowStarted || string(d.Input) != `{"who":"x"}` {
			t.Fatalf("show %s: %d %s", id, code, body)
		}
	}
	var d api.RunDetail
	if code, body := f.do("GET", "/v1/runs/"+url.PathEscape("parent/steps[0]"), "", &d); code != 200 || d.Run.RunID != b.Run.RunID {
		t.Fatalf("show slash id: %d %s", code, body)
	}

	var p api.EventPage
	if code, body := f.do("GET", "/v1/runs/a/events?after=1", "", &p); code != 200 || len(p.Events) == 0 || p.Events[0].Seq != 2 {
		t.Fatalf("events: %d %s", code, body)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.start("w", `{"who":"x"}`)
	valid, _ := json.Marshal(engine.StartRequest{SpecFile: "t.wend.yaml", Source: inputSpec, Input: json.RawMessage(`{}`)})
	invalidSpec, _ := json.Marshal(engine.StartRequest{SpecFile: "b.wend.yaml", Source: "wend: v1\nname: b\nsteps: [{delay: 0s}]\n"})
	tests := []struct {
		name, method, path, body string
		status                   int
		code, fragment           string
	}{
		{"unknown workflow", "GET", "/v1/runs/nope", "", 404, api.CodeNotFound, `no workflow or run "nope"`},
		{"unknown workflow events", "GET", "/v1/runs/nope/events", "", 404, api.CodeNotFound, "nope"},
		{"unknown workflow wait", "GET", "/v1/runs/nope/wait", "", 404, api.CodeNotFound, "nope"},
		{"signal unknown", "POST", "/v1/runs/nope/signals", `{"name":"x"}`, 404, api.CodeNotFound, "nope"},
		{"cancel unknown", "POST", "/v1/runs/nope/cancel", `{}`, 404, api.CodeNotFound, "nope"},
		{"bad status", "GET", "/v1/runs?status=done", "", 400, api.CodeBadRequest, `unknown status "done"`},
		{"unknown parameter", "GET", "/v1/runs?state=x", "", 400, api.CodeBadRequest, `unknown parameter "state"`},
		{"bad after", "GET", "/v1/runs/w/events?after=-1", "", 400, api.CodeBadRequest, "not a sequence number"},
		{"bad timeout", "GET", "/v1/runs/w/wait?timeout=soon", "", 400, api.CodeBadRequest, "must be a duration"},
		{"timeout too long", "GET", "/v1/runs/w/wait?timeout=1h", "", 400, api.CodeBadRequest, "at most 5m0s"},
		{"start not JSON", "POST", "/v1/runs", `{"spec_file":`, 400, api.CodeBadRequest, "bad request body"},
		{"start empty", "POST", "/v1/runs", ``, 400, api.CodeBadRequest, "empty body"},
		{"start unknown field", "POST", "/v1/runs", `{"file":"x"}`, 400, api.CodeBadRequest, `unknown field "file"`},
		{"start two values", "POST", "/v1/runs", `{} {}`, 400, api.CodeBadRequest, "more than one JSON value"},
		{"start no source", "POST", "/v1/runs", `{"spec_file":"x"}`, 400, api.CodeBadRequest, "spec_file and source are required"},
		{"start invalid workflow", "POST", "/v1/runs", string(invalidSpec), 400, api.CodeBadWorkflow, "duration must be positive"},
		{"start input against schema", "POST", "/v1/runs", string(valid), 400, api.CodeInvalid, "invalid input"},
		{"signal no name", "POST", "/v1/runs/w/signals", `{"data":1}`, 400, api.CodeBadRequest, "no signal name"},
		{"signal data not JSON", "POST", "/v1/runs/w/signals", `{"name":"a","data":nope}`, 400, api.CodeBadRequest, "bad request body"},
		{"unknown route", "GET", "/v1/nothing", "", 404, api.CodeNotFound, "no route GET /v1/nothing"},
		{"wrong method", "DELETE", "/v1/runs/w", "", 404, api.CodeNotFound, "no route DELETE"},
		{"check unsupported", "GET", "/v1/check", "", 501, api.CodeUnsupported, "cannot check this store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.do(tt.method, tt.path, tt.body, nil)
			wantError(t, code, body, tt.status, tt.code, tt.fragment)
		})
	}
}

func TestCancelAndHealth(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	st := f.start("c", `{"who":"x"}`)
	f.waitFor("c", waitingForSignal)
	var h map[string]any
	if code, body := f.do("GET", "/v1/health", "", &h); code != 200 || h["status"] != "ok" {
		t.Fatalf("health: %d %s", code, body)
	}
	var cr struct{ Run history.Run }
	if code, body := f.do("POST", "/v1/runs/"+st.Run.RunID+"/cancel", `{"reason":"test"}`, &cr); code != 200 || cr.Run.Status != history.StatusCancelled {
		t.Fatalf("cancel by run id: %d %s", code, body)
	}
	d, err := f.srv.Show("c")
	if err != nil || d.Failure == nil || d.Failure.Category != history.CategoryCancelled || len(d.Waits) != 0 {
		t.Fatalf("show after cancel: %+v %v", d, err)
	}
	var o api.Outcome
	if code, body := f.do("GET", "/v1/runs/c/wait", "", &o); code != 200 || !o.Closed || o.Failure == nil {
		t.Fatalf("wait on a cancelled run: %d %s", code, body)
	}
}

func TestCheck(t *testing.T) {
	store := checkStore{MemStore: history.NewMemStore()}
	f := newFixture(t, store)
	f.start("k", `{"who":"x"}`)
	var rep api.CheckReport
	if code, body := f.do("GET", "/v1/check", "", &rep); code != 200 || rep.Runs != 1 || rep.Events == 0 || len(rep.Problems) != 0 {
		t.Fatalf("check: %d %s", code, body)
	}
	bad := newFixture(t, checkStore{MemStore: history.NewMemStore(), problems: []string{"run r: event 2: bad"}})
	if code, body := bad.do("GET", "/v1/check", "", &rep); code != 200 || len(rep.Problems) != 1 {
		t.Fatalf("check with problems: %d %s", code, body)
	}
}

func TestReadOnly(t *testing.T) {
	s := New(nil, history.NewMemStore())
	hs := httptest.NewServer(s)
	defer hs.Close()
	for path, body := range map[string]string{
		"/v1/runs": `{"spec_file":"f.wend.yaml","source":"s"}`,
	} {
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		wantError(t, resp.StatusCode, string(b), 501, api.CodeUnsupported, "no engine drives this database here")
	}
	// Without an engine, an unknown id is still a 404 and an open run a 501.
	if _, err := s.Signal(context.Background(), "x", "a", nil); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("signal unknown, read only: %v", err)
	}
}

func TestErrorIs(t *testing.T) {
	for code, target := range map[string]error{api.CodeNotFound: history.ErrNotFound, api.CodeRunClosed: engine.ErrRunClosed,
		api.CodeBlocked: engine.ErrBlocked, api.CodeInvalid: engine.ErrInvalidInput, api.CodeStopped: engine.ErrStopped} {
		if e := api.NewError(code, "m"); !errors.Is(e, target) || e.Status == http.StatusInternalServerError {
			t.Errorf("NewError(%s): Is %v false or status %d", code, target, e.Status)
		}
	}
	if e := api.DecodeError(502, []byte("<html>")); e.Code != api.CodeInternal || !strings.Contains(e.Message, "502 Bad Gateway") {
		t.Errorf("DecodeError of a foreign body: %+v", e)
	}
}
