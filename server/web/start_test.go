package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// TestUIStartForm: the runs page offers the registered workflows to a logged-in operator;
// the form starts a run by name, behind the session's CSRF check like the run buttons.
func TestUIStartForm(t *testing.T) {
	f := newWebFixture(t)
	if _, _, body := f.send(req{Method: "GET", Path: "/ui/runs", Session: true}); strings.Contains(body, "start-form") {
		t.Fatal("start form shown with nothing registered")
	}
	writeFile(t, filepath.Join(f.dir, "approval.wend.yaml"), waitSpec)
	ws, err := server.LoadWorkflows(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
	if code, _, body := f.send(req{Method: "GET", Path: "/ui/runs"}); code != http.StatusUnauthorized || strings.Contains(body, "start-form") {
		t.Fatalf("runs page without a login: %d", code)
	}
	if _, _, body := f.send(req{Method: "GET", Path: "/ui/runs", ReadSession: true}); strings.Contains(body, "start-form") || !strings.Contains(body, "with the act token to start a run") {
		t.Fatal("start form shown to the read token")
	}
	if _, _, body := f.send(req{Method: "GET", Path: "/ui/runs", Session: true}); !strings.Contains(body, `id="start-form"`) || !strings.Contains(body, `<option value="approval"`) {
		t.Fatalf("no start form: %s", body)
	}
	post := func(v url.Values) (int, http.Header, string) {
		body, h := form(f, v, f.base)
		return f.send(req{Method: "POST", Path: "/ui/runs", Body: body, Header: h, Session: true})
	}
	code, h, _ := post(url.Values{"workflow": {"approval"}, "input": {`{"who":"ui"}`}, "id": {"u1"}})
	if code != 303 || !strings.HasSuffix(h.Get("Location"), "?done=start") {
		t.Fatalf("start: %d %v", code, h)
	}
	f.settle("u1", waitingForSignal)
	if code, h, _ := post(url.Values{"workflow": {"approval"}, "input": {`{"who":"ui"}`}, "id": {"u1"}}); code != 303 || !strings.HasSuffix(h.Get("Location"), "?done=exists") {
		t.Fatalf("again: %d %v", code, h)
	}
	code, _, body := post(url.Values{"workflow": {"nope"}, "input": {`{"a":"<b>"}`}})
	if code != 404 || !strings.Contains(body, "registered: approval") || !strings.Contains(body, `{&#34;a&#34;:&#34;&lt;b&gt;&#34;}`) {
		t.Fatalf("unknown: %d %s", code, body)
	}
	if code, _, body := post(url.Values{"workflow": {"approval"}, "input": {"{not json"}}); code != 400 || !strings.Contains(body, "input is not JSON") {
		t.Fatalf("bad input: %d %s", code, body)
	}
	body, hdr := form(f, url.Values{"workflow": {"approval"}, "csrf": {"-"}}, f.base)
	if code, _, _ := f.send(req{Method: "POST", Path: "/ui/runs", Body: body, Header: hdr, Session: true}); code != 403 {
		t.Fatalf("no CSRF value: %d", code)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// typedSpec's input must carry a string order_id.
const typedSpec = `wend: v1
name: typed
input:
  type: object
  required: [order_id]
  properties:
    order_id: {type: string}
plugins: {demo: ./demo}
steps:
  - id: wait
    wait_for_signal: go
`

// TestUIStartFormInputSchema: the start form's input is checked against the
// workflow's input schema; a mismatch is shown on the form, which keeps what was typed, and
// starts nothing.
func TestUIStartFormInputSchema(t *testing.T) {
	f := newWebFixture(t)
	writeFile(t, filepath.Join(f.dir, "typed.wend.yaml"), typedSpec)
	ws, err := server.LoadWorkflows(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
	post := func(input string) (int, http.Header, string) {
		body, h := form(f, url.Values{"workflow": {"typed"}, "input": {input}, "id": {"t-1"}}, f.base)
		return f.send(req{Method: "POST", Path: "/ui/runs", Body: body, Header: h, Session: true})
	}
	code, _, body := post(`{"order_id": 7}`)
	if code != 400 || !strings.Contains(body, `id="error"`) || !strings.Contains(body, "invalid input: input.order_id: expected string, got integer") ||
		!strings.Contains(body, `{&#34;order_id&#34;: 7}</textarea>`) || !strings.Contains(body, `id="start" open`) {
		t.Fatalf("invalid input: %d %s", code, body)
	}
	if runs, _ := f.srv.List(history.RunFilter{}); len(runs) != 0 {
		t.Fatalf("an invalid input started %d runs", len(runs))
	}
	if code, h, _ := post(`{"order_id": "A-7"}`); code != 303 || !strings.HasSuffix(h.Get("Location"), "?done=start") {
		t.Fatalf("valid input: %d %v", code, h)
	}
}
