package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/enginetest"
)

const webToken = servertest.Token

// webFixture is a Server behind ListenTCP on a loopback port, as wend serve runs it, with
// stand-ins for the UI and the metrics its leaves provide.
type webFixture struct {
	t    *testing.T
	srv  *Server
	tcp  *TCPServer
	eng  *engine.Engine
	dir  string
	base string
	c    *servertest.Client
}

func newWebFixture(t *testing.T) *webFixture {
	t.Helper()
	store := history.NewMemStore()
	eng := enginetest.New(t, engine.Options{Store: store, Activities: servertest.Acts{}})
	f := &webFixture{t: t, srv: New(eng, store), eng: eng, dir: t.TempDir()}
	tcp, err := ListenTCP(f.srv, TCPOptions{Addr: "127.0.0.1:0", Token: webToken, ReadToken: servertest.ReadToken, Metrics: standInMetrics, UI: standInUI{f.srv}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	f.tcp, f.base = tcp, tcp.URL()
	f.c = &servertest.Client{T: t, Base: f.base}
	return f
}

// standInMetrics is what the listener mounts at /metrics (package metrics makes the real one).
var standInMetrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "stand-in metrics\n") })

// standInUI is what the guard's tests serve in place of package web's UI: a runs page, the
// login form and one form post that signals, so a test sees what the guard lets through.
type standInUI struct{ s *Server }

func (u standInUI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, isSignal := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/ui/runs/"), "/signal")
	switch {
	case r.Method == "GET" && r.URL.Path == "/ui/runs":
		runs, _ := u.s.List(history.RunFilter{})
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "Runs:")
		for _, run := range runs {
			_, _ = io.WriteString(w, " "+run.WorkflowID)
		}
	case r.Method == "POST" && isSignal:
		if _, err := u.s.Signal(r.Context(), id, r.PostFormValue("name"), json.RawMessage(r.PostFormValue("data"))); err != nil {
			writeError(w, err)
			return
		}
		http.Redirect(w, r, u.Home(), http.StatusSeeOther)
	default:
		u.s.ServeHTTP(w, r)
	}
}

// Routes and Need make the stand-in Routed: its two pages, then the API's routes.
func (u standInUI) Routes() []Route {
	return append([]Route{{"GET /ui/runs", AccessRead}, {"POST /ui/runs/{id}/signal", AccessAct}}, u.s.Routes()...)
}

func (u standInUI) Need(r *http.Request) Access {
	if strings.HasPrefix(r.URL.Path, "/ui/") {
		return needByMethod(r)
	}
	return u.s.Need(r)
}

func (standInUI) LoginPage(w http.ResponseWriter, status int, why string) {
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "Log in "+why)
}

func (standInUI) Home() string { return "/ui/runs" }

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

type req = servertest.Req

// send makes the request without following redirects and returns status, headers and body.
func (f *webFixture) send(r req) (int, http.Header, string) { f.t.Helper(); return f.c.Send(r) }

// csrf is the value the guard expects from this fixture's session.
func (f *webFixture) csrf() string {
	g := newGuard(guardConfig{act: webToken, loopback: true}, nil, nil)
	return g.csrf()
}

func bearer() map[string]string { return servertest.Bearer() }

// form is servertest.Form with this fixture's session's CSRF value.
func form(f *webFixture, v url.Values, origin string) (string, map[string]string) {
	return servertest.Form(v, f.csrf, origin)
}

func errorCode(body string) string {
	var b struct {
		Error struct{ Code string }
	}
	_ = json.Unmarshal([]byte(body), &b)
	return b.Error.Code
}

// TestGuard is the auth model over TCP: a token for every read of run data, loopback
// included; the act token (or its session with same origin and CSRF value) for every
// mutation; loopback Host names only; bounded bodies.
func TestGuard(t *testing.T) {
	f := newWebFixture(t)
	run := f.start("w1", waitSpec)
	f.settle("w1", waitingForSignal)
	start, _ := json.Marshal(engine.StartRequest{WorkflowID: "s1", SpecFile: filepath.Join(f.dir, "s.wend.yaml"), Source: inputSpec, Input: json.RawMessage(`{"who":"x"}`)})
	sig := "/ui/runs/" + run.RunID + "/signal"
	okForm, okHdr := form(f, url.Values{"name": {"approve"}, "data": {`{"by":"ann"}`}}, f.base)
	noCSRF, _ := form(f, url.Values{"name": {"approve"}, "csrf": {"-"}}, f.base)
	badCSRF, _ := form(f, url.Values{"name": {"approve"}, "csrf": {"nope"}}, f.base)
	evilForm, evilHdr := form(f, url.Values{"name": {"approve"}}, "http://evil.example")
	tests := []struct {
		name     string
		r        req
		status   int
		code     string // error code, when the answer is a JSON error
		contains string
	}{
		{"read without token on loopback", req{Method: "GET", Path: "/v1/runs"}, 401, api.CodeUnauthorized, ""},
		{"read with the token", req{Method: "GET", Path: "/v1/runs", Header: bearer()}, 200, "", `"w1"`},
		{"read with a wrong token", req{Method: "GET", Path: "/v1/health", Header: map[string]string{"Authorization": "Bearer wrong"}}, 401, api.CodeUnauthorized, "not this server's"},
		{"health open on loopback", req{Method: "GET", Path: "/v1/health"}, 200, "", `"ok"`},
		{"metrics open on loopback", req{Method: "GET", Path: "/metrics"}, 200, "", "stand-in metrics"},
		{"ui without session on loopback", req{Method: "GET", Path: "/ui/runs"}, 401, "", "Log in"},
		{"ui with session", req{Method: "GET", Path: "/ui/runs", Session: true}, 200, "", "w1"},
		{"start without token", req{Method: "POST", Path: "/v1/runs", Body: string(start)}, 401, api.CodeUnauthorized, ""},
		{"start with a wrong token", req{Method: "POST", Path: "/v1/runs", Body: string(start), Header: map[string]string{"Authorization": "Bearer wrong"}}, 401, api.CodeUnauthorized, ""},
		{"start with the token in another scheme", req{Method: "POST", Path: "/v1/runs", Body: string(start), Header: map[string]string{"Authorization": "Basic " + webToken}}, 401, api.CodeUnauthorized, ""},
		{"start with the token", req{Method: "POST", Path: "/v1/runs", Body: string(start), Header: bearer()}, 201, "", `"started":true`},
		{"cancel without token", req{Method: "POST", Path: "/v1/runs/w1/cancel", Body: `{}`}, 401, api.CodeUnauthorized, ""},
		{"ui post without session", req{Method: "POST", Path: sig, Body: okForm, Header: okHdr}, 401, "", "Log in"},
		{"ui post without csrf", req{Method: "POST", Path: sig, Body: noCSRF, Header: okHdr, Session: true}, 403, api.CodeForbidden, "CSRF"},
		{"ui post with a wrong csrf", req{Method: "POST", Path: sig, Body: badCSRF, Header: okHdr, Session: true}, 403, api.CodeForbidden, "CSRF"},
		{"ui post from another origin", req{Method: "POST", Path: sig, Body: evilForm, Header: evilHdr, Session: true}, 403, api.CodeForbidden, "Origin"},
		{"ui post without origin or referer", req{Method: "POST", Path: sig, Body: okForm, Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Session: true}, 403, api.CodeForbidden, "Origin"},
		{"ui post cross-site fetch", req{Method: "POST", Path: sig, Body: okForm, Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": f.base, "Sec-Fetch-Site": "cross-site"}, Session: true}, 403, api.CodeForbidden, "cross-site"},
		{"dns rebinding host", req{Method: "GET", Path: "/v1/health", Header: map[string]string{"Host": "evil.example:80"}}, 421, api.CodeBadRequest, "loopback"},
		{"bad json", req{Method: "POST", Path: "/v1/runs", Body: `{"id":`, Header: bearer()}, 400, api.CodeBadRequest, ""},
		{"body too large", req{Method: "POST", Path: "/v1/runs", Body: `{"source":"` + strings.Repeat("x", maxBody) + `"}`, Header: bearer()}, 400, api.CodeBadRequest, "too large"},
		{"unknown route without token", req{Method: "GET", Path: "/v1/nope"}, 401, api.CodeUnauthorized, ""},
		{"unknown route", req{Method: "GET", Path: "/v1/nope", Header: bearer()}, 404, api.CodeNotFound, ""},
		{"wrong login", req{Method: "GET", Path: "/ui/login?token=wrong"}, 401, "", "wrong token"},
		{"login form from another origin", req{Method: "POST", Path: "/ui/login", Body: "token=" + webToken, Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}}, 403, api.CodeForbidden, ""},
		{"ui signal with session", req{Method: "POST", Path: sig, Body: okForm, Header: okHdr, Session: true}, 303, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := f.send(tt.r)
			if code != tt.status {
				t.Fatalf("status %d, want %d: %.300s", code, tt.status, body)
			}
			if tt.code != "" && errorCode(body) != tt.code {
				t.Errorf("error code %q, want %q: %.300s", errorCode(body), tt.code, body)
			}
			if !strings.Contains(body, tt.contains) {
				t.Errorf("body lacks %q: %.300s", tt.contains, body)
			}
		})
	}
	// Only the last request delivered the signal: the refused ones left no trace.
	d := f.settle("w1", closed)
	if d.Run.Status != history.StatusCompleted || string(d.Output) != `{"by":"ann","hi":"bo"}` {
		t.Errorf("after the signal: %s %s", d.Run.Status, d.Output)
	}
	var got int
	for _, ev := range d.Events {
		if ev.Type == history.SignalReceived {
			got++
		}
	}
	if got != 1 {
		t.Errorf("%d signals received, want exactly 1 (refused posts must not signal)", got)
	}
}

// TestLoginCookie checks the session cookie's attributes: scripts cannot read it and other
// sites' requests do not carry it.
func TestLoginCookie(t *testing.T) {
	f := newWebFixture(t)
	code, h, _ := f.send(req{Method: "POST", Path: "/ui/login", Body: "token=" + webToken,
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": f.base}})
	if code != http.StatusSeeOther || h.Get("Location") != (standInUI{}).Home() {
		t.Fatalf("login: %d %v", code, h)
	}
	sc := h.Get("Set-Cookie")
	for _, want := range []string{sessionCookie + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %q", sc, want)
		}
	}
	if strings.Contains(sc, webToken) {
		t.Errorf("the cookie holds the token itself: %q", sc)
	}
}

// TestGuardRemote: bound elsewhere, reads need the token too.
func TestGuardRemote(t *testing.T) {
	s := New(nil, history.NewMemStore())
	g := newGuard(guardConfig{act: webToken}, standInUI{s}, standInUI{s})
	for _, tt := range []struct {
		path, auth string
		status     int
		contains   string
	}{
		{"/v1/runs", "", 401, api.CodeUnauthorized},
		{"/ui/runs", "", 401, "Log in"},
		{"/v1/runs", "Bearer " + webToken, 200, `"runs"`},
		{"/ui/runs", "Bearer " + webToken, 200, "Runs"},
	} {
		rec := newRecorder()
		r, _ := http.NewRequest("GET", "http://203.0.113.5:8080"+tt.path, nil)
		if tt.auth != "" {
			r.Header.Set("Authorization", tt.auth)
		}
		g.ServeHTTP(rec, r)
		if rec.code != tt.status || !strings.Contains(rec.body.String(), tt.contains) {
			t.Errorf("GET %s (%q): %d %.200s, want %d with %q", tt.path, tt.auth, rec.code, rec.body.String(), tt.status, tt.contains)
		}
	}
}

func TestListenTCPRefusals(t *testing.T) {
	s := New(nil, history.NewMemStore())
	if _, err := ListenTCP(s, TCPOptions{Addr: "0.0.0.0:0", Token: webToken}); !errors.Is(err, ErrRemoteNeedsToken) {
		t.Errorf("0.0.0.0 without AllowRemote: %v", err)
	}
	if _, err := ListenTCP(s, TCPOptions{Addr: "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "token is required") {
		t.Errorf("no token: %v", err)
	}
	if _, err := ListenTCP(s, TCPOptions{Addr: "nonsense"}); err == nil {
		t.Errorf("bad address accepted")
	}
	tcp, err := ListenTCP(s, TCPOptions{Addr: "127.0.0.1:0", Token: webToken})
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	if tcp.srv.ReadHeaderTimeout == 0 || tcp.srv.ReadTimeout == 0 || tcp.srv.WriteTimeout <= MaxWait || tcp.srv.IdleTimeout == 0 || tcp.srv.MaxHeaderBytes == 0 {
		t.Errorf("timeouts not all set: %+v", tcp.srv)
	}
}

// recorder is a minimal ResponseWriter for handler tests.
type recorder struct {
	code int
	h    http.Header
	body strings.Builder
}

func newRecorder() *recorder                    { return &recorder{h: http.Header{}} }
func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// TestGuardReadToken: the read token, by bearer or session, reads everything that returns
// data and is refused every mutation with 403; its session's pages get no CSRF value.
func TestGuardReadToken(t *testing.T) {
	f := newWebFixture(t)
	run := f.start("w1", waitSpec)
	f.settle("w1", waitingForSignal)
	sig := "/ui/runs/" + run.RunID + "/signal"
	rb := servertest.ReadBearer()
	tests := []struct {
		name     string
		r        req
		status   int
		code     string
		contains string
	}{
		{"read by bearer", req{Method: "GET", Path: "/v1/runs/w1/export", Header: rb}, 200, "", `"bo"`},
		{"read by session", req{Method: "GET", Path: "/ui/runs", ReadSession: true}, 200, "", "w1"},
		{"signal by bearer", req{Method: "POST", Path: "/v1/runs/w1/signals", Body: `{"name":"approve"}`, Header: rb}, 403, api.CodeForbidden, "needs the act token"},
		{"backup by bearer", req{Method: "GET", Path: "/v1/backup", Header: rb}, 403, api.CodeForbidden, ""},
		{"signal by session form", req{Method: "POST", Path: sig, Body: "name=approve", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": f.base}, ReadSession: true}, 403, api.CodeForbidden, "needs the act token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := f.send(tt.r)
			if code != tt.status || tt.code != "" && errorCode(body) != tt.code || !strings.Contains(body, tt.contains) {
				t.Fatalf("%d %.300s, want %d %s with %q", code, body, tt.status, tt.code, tt.contains)
			}
		})
	}
	if d := f.settle("w1", waitingForSignal); !d.Run.Open() {
		t.Errorf("the read token's refused signal reached the run")
	}
	// The two sessions differ and neither holds a token.
	read, act := f.c.LoginRead(), f.c.Login()
	if len(read) != 1 || len(act) != 1 || read[0].Value == act[0].Value ||
		strings.Contains(read[0].Value, servertest.ReadToken) || strings.Contains(act[0].Value, webToken) {
		t.Errorf("sessions: read %v, act %v", read, act)
	}
	g := newGuard(guardConfig{act: webToken, read: servertest.ReadToken, loopback: true}, nil, f.srv)
	rec := newRecorder()
	r, _ := http.NewRequest("GET", "http://127.0.0.1/v1/runs", nil)
	r.AddCookie(read[0])
	var seen Auth
	g.next = asRouted(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen, _ = AuthOf(r) }))
	g.ServeHTTP(rec, r)
	if seen != (Auth{Authed: true}) {
		t.Errorf("a read session's Auth: %+v, want authed, no act, no CSRF", seen)
	}
}

// TestGuardOpenReads: with OpenReads a tokenless request reads on loopback, and still acts
// on nothing; a wrong token is refused all the same.
func TestGuardOpenReads(t *testing.T) {
	s := New(nil, history.NewMemStore())
	g := newGuard(guardConfig{act: webToken, read: servertest.ReadToken, loopback: true, openReads: true}, nil, s)
	for _, tt := range []struct {
		method, path, auth string
		status             int
	}{
		{"GET", "/v1/runs", "", 200},
		{"GET", "/v1/health", "", 200},
		{"GET", "/v1/backup", "", 401},
		{"POST", "/v1/runs/x/cancel", "", 401},
		{"GET", "/v1/runs", "Bearer wrong", 401},
		{"POST", "/v1/runs/x/cancel", "Bearer " + servertest.ReadToken, 403},
	} {
		rec := newRecorder()
		r, _ := http.NewRequest(tt.method, "http://127.0.0.1:8080"+tt.path, strings.NewReader(`{}`))
		if tt.auth != "" {
			r.Header.Set("Authorization", tt.auth)
		}
		g.ServeHTTP(rec, r)
		if rec.code != tt.status && !(tt.status == 200 && rec.code == 0) {
			t.Errorf("%s %s (%q): %d %.200s, want %d", tt.method, tt.path, tt.auth, rec.code, rec.body.String(), tt.status)
		}
	}
}

// TestListenTCPTokenRefusals: the read token is checked like the act token, must differ from
// it, and open reads are for loopback only.
func TestListenTCPTokenRefusals(t *testing.T) {
	s := New(nil, history.NewMemStore())
	for _, tt := range []struct {
		opts TCPOptions
		want string
	}{
		{TCPOptions{Addr: "127.0.0.1:0", Token: webToken, ReadToken: webToken}, "the read token is the act token"},
		{TCPOptions{Addr: "127.0.0.1:0", Token: webToken, ReadToken: "short"}, "the read token: the token is 5 characters"},
		{TCPOptions{Addr: "0.0.0.0:0", Token: webToken, AllowRemote: true, OpenReads: true}, "--open-reads is for a loopback address only"},
	} {
		if tcp, err := ListenTCP(s, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			if tcp != nil {
				tcp.Close()
			}
			t.Errorf("%+v: %v, want %q", tt.opts, err, tt.want)
		}
	}
}
