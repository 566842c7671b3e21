package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
)

const webToken = "test-token-0123456789abcdef"

// webActs plays the plugins: "fail" fails for good with the message it is given, everything
// else echoes its input.
type webActs struct{}

func (webActs) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	if c.Activity == "fail" {
		var in struct{ Message string }
		_ = json.Unmarshal(c.Input, &in)
		return nil, &history.ActivityError{Type: "CardDeclined", Message: in.Message, NonRetryable: true}
	}
	return c.Input, nil
}

const (
	waitSpec = `wend: v1
name: approval
plugins: {demo: ./demo}
steps:
  - id: greet
    activity: demo.echo
    with: {hi: "${{ input.who }}"}
  - id: approve
    wait_for_signal: approve
output: {by: "${{ steps.approve.output.by }}", hi: "${{ steps.greet.output.hi }}"}
`
	webFailSpec = `wend: v1
name: failing
plugins: {demo: ./demo}
steps:
  - id: charge
    activity: demo.fail
    with: {message: "card <b>declined</b>"}
`
	webEchoSpec = `wend: v1
name: echo
plugins: {demo: ./demo}
steps:
  - id: evil
    activity: demo.echo
    with: {html: "<script>alert(1)</script>"}
output: {html: "${{ steps.evil.output.html }}"}
`
)

// webFixture is a Server with the UI behind server.ListenTCP on a loopback port, as wend
// serve runs it.
type webFixture struct {
	t    *testing.T
	srv  *server.Server
	dir  string
	jar  []*http.Cookie
	base string
}

func newWebFixture(t *testing.T) *webFixture {
	t.Helper()
	store := history.NewMemStore()
	eng := engine.New(engine.Options{Store: store, Activities: webActs{}, Logf: t.Logf})
	t.Cleanup(func() { eng.Close() })
	f := &webFixture{t: t, srv: server.New(eng, store), dir: t.TempDir()}
	tcp, err := server.ListenTCP(f.srv, server.TCPOptions{Addr: "127.0.0.1:0", Token: webToken, UI: New(f.srv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	f.base = tcp.URL()
	return f
}

// start begins a run of src under id and returns it.
func (f *webFixture) start(id, src string) history.Run {
	f.t.Helper()
	st, err := f.srv.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, id+".wend.yaml"),
		Source: src, Input: json.RawMessage(`{"who":"bo"}`)})
	if err != nil {
		f.t.Fatal(err)
	}
	return st.Run
}

// settle waits until the run of id satisfies cond.
func (f *webFixture) settle(id string, cond func(server.RunDetail) bool) server.RunDetail {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := f.srv.Show(id)
		if err == nil && cond(d) {
			return d
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("run %s: condition not met: %+v %v", id, d.Run, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func closed(d server.RunDetail) bool { return !d.Run.Open() }

func waitingForSignal(d server.RunDetail) bool {
	for _, w := range d.Waits {
		if w.Kind == runview.WaitSignal {
			return true
		}
	}
	return false
}

// req describes one request of a table.
type req struct {
	method, path, body string
	header             map[string]string
	session            bool // send the session cookie
}

// send makes the request without following redirects and returns status, headers and body.
func (f *webFixture) send(r req) (int, http.Header, string) {
	f.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, f.base+r.path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	if r.session {
		for _, c := range f.login() {
			hr.AddCookie(c)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(hr)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// login trades the token for the session cookie once, as a browser following the link wend
// serve prints does.
func (f *webFixture) login() []*http.Cookie {
	f.t.Helper()
	if f.jar != nil {
		return f.jar
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(f.base + server.LoginPath + "?token=" + webToken)
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != uiRunsPath {
		f.t.Fatalf("login: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	f.jar = resp.Cookies()
	return f.jar
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf is the value the session's pages embed in their forms, read from the list page (its
// start form, when workflows are registered) or else a run's page (its buttons).
func (f *webFixture) csrf() string {
	f.t.Helper()
	pages := []string{uiRunsPath}
	if runs, _ := f.srv.List(history.RunFilter{}); len(runs) > 0 {
		pages = append(pages, uiRunsPath+"/"+runs[0].RunID)
	}
	for _, p := range pages {
		_, _, body := f.send(req{method: "GET", path: p, session: true})
		if m := csrfInput.FindStringSubmatch(body); m != nil {
			return m[1]
		}
	}
	f.t.Fatalf("no CSRF value on %v", pages)
	return ""
}

// form encodes v as a session's form post from origin, with the page's CSRF value unless v
// sets one ("-" for none).
func form(f *webFixture, v url.Values, origin string) (string, map[string]string) {
	if v.Get("csrf") == "-" {
		v.Del("csrf")
	} else if !v.Has("csrf") {
		v.Set("csrf", f.csrf())
	}
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if origin != "" {
		h["Origin"] = origin
	}
	return v.Encode(), h
}

func bearer() map[string]string { return map[string]string{"Authorization": "Bearer " + webToken} }
