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
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

const webToken = "test-token-0123456789abcdef"

// webActs plays the plugins for the web tests: "fail" fails for good with the message it is
// given, "flaky" fails in a way a retry may fix, everything else echoes its input.
type webActs struct{}

func (webActs) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	if c.Activity == "fail" {
		var in struct{ Message string }
		_ = json.Unmarshal(c.Input, &in)
		return nil, &history.ActivityError{Type: "CardDeclined", Message: in.Message, NonRetryable: true}
	}
	if c.Activity == "flaky" {
		return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
	}
	return c.Input, nil
}

// webFixture is a Server behind ListenTCP on a loopback port, as wend serve runs it.
type webFixture struct {
	t    *testing.T
	srv  *Server
	tcp  *TCPServer
	eng  *engine.Engine
	dir  string
	jar  []*http.Cookie
	base string
}

func newWebFixture(t *testing.T) *webFixture {
	t.Helper()
	store := history.NewMemStore()
	eng := engine.New(engine.Options{Store: store, Activities: webActs{}, Logf: t.Logf})
	t.Cleanup(func() { eng.Close() })
	f := &webFixture{t: t, srv: New(eng, store), eng: eng, dir: t.TempDir()}
	tcp, err := ListenTCP(f.srv, TCPOptions{Addr: "127.0.0.1:0", Token: webToken, Metrics: standInMetrics, UI: standInUI{f.srv}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	f.tcp, f.base = tcp, tcp.URL()
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
func (f *webFixture) settle(id string, cond func(RunDetail) bool) RunDetail {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
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

func closed(d RunDetail) bool { return !d.Run.Open() }

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
		if k == "Host" {
			hr.Host = v
			continue
		}
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

// login trades the token for the session cookie once.
func (f *webFixture) login() []*http.Cookie {
	f.t.Helper()
	if f.jar != nil {
		return f.jar
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(f.base + "/ui/login?token=" + webToken)
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("login: %d", resp.StatusCode)
	}
	f.jar = resp.Cookies()
	return f.jar
}

// csrf is the value the guard expects from this fixture's session.
func (f *webFixture) csrf() string {
	g := newGuard(webToken, true, nil, nil)
	return g.csrf()
}

func bearer() map[string]string { return map[string]string{"Authorization": "Bearer " + webToken} }

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

func errorCode(body string) string {
	var b struct {
		Error struct{ Code string }
	}
	_ = json.Unmarshal([]byte(body), &b)
	return b.Error.Code
}

// TestGuard is the auth model over TCP: open reads on loopback, the token (or a session with
// same origin and CSRF value) for every mutation, loopback Host names only, bounded bodies.
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
		{"read open on loopback", req{method: "GET", path: "/v1/runs"}, 200, "", `"w1"`},
		{"metrics open on loopback", req{method: "GET", path: "/metrics"}, 200, "", "stand-in metrics"},
		{"ui open on loopback", req{method: "GET", path: "/ui/runs"}, 200, "", "w1"},
		{"start without token", req{method: "POST", path: "/v1/runs", body: string(start)}, 401, CodeUnauthorized, ""},
		{"start with a wrong token", req{method: "POST", path: "/v1/runs", body: string(start), header: map[string]string{"Authorization": "Bearer wrong"}}, 401, CodeUnauthorized, ""},
		{"start with the token in another scheme", req{method: "POST", path: "/v1/runs", body: string(start), header: map[string]string{"Authorization": "Basic " + webToken}}, 401, CodeUnauthorized, ""},
		{"start with the token", req{method: "POST", path: "/v1/runs", body: string(start), header: bearer()}, 201, "", `"started":true`},
		{"cancel without token", req{method: "POST", path: "/v1/runs/w1/cancel", body: `{}`}, 401, CodeUnauthorized, ""},
		{"ui post without session", req{method: "POST", path: sig, body: okForm, header: okHdr}, 401, "", "Log in"},
		{"ui post without csrf", req{method: "POST", path: sig, body: noCSRF, header: okHdr, session: true}, 403, CodeForbidden, "CSRF"},
		{"ui post with a wrong csrf", req{method: "POST", path: sig, body: badCSRF, header: okHdr, session: true}, 403, CodeForbidden, "CSRF"},
		{"ui post from another origin", req{method: "POST", path: sig, body: evilForm, header: evilHdr, session: true}, 403, CodeForbidden, "Origin"},
		{"ui post without origin or referer", req{method: "POST", path: sig, body: okForm, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, session: true}, 403, CodeForbidden, "Origin"},
		{"ui post cross-site fetch", req{method: "POST", path: sig, body: okForm, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": f.base, "Sec-Fetch-Site": "cross-site"}, session: true}, 403, CodeForbidden, "cross-site"},
		{"dns rebinding host", req{method: "GET", path: "/v1/runs", header: map[string]string{"Host": "evil.example:80"}}, 421, CodeBadRequest, "loopback"},
		{"bad json", req{method: "POST", path: "/v1/runs", body: `{"id":`, header: bearer()}, 400, CodeBadRequest, ""},
		{"body too large", req{method: "POST", path: "/v1/runs", body: `{"source":"` + strings.Repeat("x", maxBody) + `"}`, header: bearer()}, 400, CodeBadRequest, "too large"},
		{"unknown route", req{method: "GET", path: "/v1/nope"}, 404, CodeNotFound, ""},
		{"wrong login", req{method: "GET", path: "/ui/login?token=wrong"}, 401, "", "wrong token"},
		{"login form from another origin", req{method: "POST", path: "/ui/login", body: "token=" + webToken, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}}, 403, CodeForbidden, ""},
		{"ui signal with session", req{method: "POST", path: sig, body: okForm, header: okHdr, session: true}, 303, "", ""},
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
	code, h, _ := f.send(req{method: "POST", path: "/ui/login", body: "token=" + webToken,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": f.base}})
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
	g := newGuard(webToken, false, standInUI{s}, standInUI{s})
	for _, tt := range []struct {
		path, auth string
		status     int
		contains   string
	}{
		{"/v1/runs", "", 401, CodeUnauthorized},
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
