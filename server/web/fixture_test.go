package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
)

const (
	webToken    = servertest.Token
	waitSpec    = servertest.WaitSpec
	webFailSpec = servertest.FailSpec
	webEchoSpec = servertest.EchoSpec
)

// webFixture is a Server with the UI behind server.ListenTCP on a loopback port, as wend
// serve runs it.
type webFixture struct {
	t    *testing.T
	srv  *server.Server
	tcp  *server.TCPServer
	dir  string
	base string
	c    *servertest.Client
}

func newWebFixture(t *testing.T) *webFixture {
	t.Helper()
	return newWebFixtureOver(t, history.NewMemStore())
}

// newWebFixtureOver is newWebFixture over store.
func newWebFixtureOver(t *testing.T, store history.Store) *webFixture {
	t.Helper()
	_, srv := apptest.Over(t, store, servertest.Acts{})
	f := &webFixture{t: t, srv: srv, dir: t.TempDir()}
	tcp, err := server.ListenTCP(f.srv, server.TCPOptions{Addr: "127.0.0.1:0", Token: webToken, ReadToken: servertest.ReadToken, UI: New(f.srv), Metrics: standInMetrics})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	f.tcp, f.base = tcp, tcp.URL()
	f.c = &servertest.Client{T: t, Base: f.base}
	return f
}

// standInMetrics is what the listener serves at /metrics here (package server/metrics makes
// the real one, which this package may not import).
var standInMetrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("wend_runs 2\n")) })

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
func (f *webFixture) settle(id string, cond func(api.RunDetail) bool) api.RunDetail {
	f.t.Helper()
	return servertest.Settle(f.t, func() (api.RunDetail, error) { return f.srv.Show(id) }, cond)
}

func closed(d api.RunDetail) bool { return !d.Run.Open() }

func waitingForSignal(d api.RunDetail) bool {
	for _, w := range d.Waits {
		if w.Kind == runview.WaitSignal {
			return true
		}
	}
	return false
}

type req = servertest.Req

// send makes the request without following redirects and returns status, headers and body.
func (f *webFixture) send(r req) (int, http.Header, string) { f.t.Helper(); return f.c.Send(r) }

var csrfInput = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf is the value the session's pages embed in their forms, read from the list page (its
// start form, when workflows are registered) or else the first run page that has a button.
func (f *webFixture) csrf() string {
	f.t.Helper()
	pages := []string{uiRunsPath}
	runs, _ := f.srv.List(history.RunFilter{})
	for _, r := range runs { // a closed run's page may offer no button
		pages = append(pages, uiRunsPath+"/"+r.RunID)
	}
	for _, p := range pages {
		_, _, body := f.send(req{Method: "GET", Path: p, Session: true})
		if m := csrfInput.FindStringSubmatch(body); m != nil {
			return m[1]
		}
	}
	f.t.Fatalf("no CSRF value on %v", pages)
	return ""
}

// form is servertest.Form with this fixture's session's CSRF value.
func form(f *webFixture, v url.Values, origin string) (string, map[string]string) {
	return servertest.Form(v, f.csrf, origin)
}

func bearer() map[string]string { return servertest.Bearer() }
