package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server/internal/servertest"
)

// FuzzGuard sends the guard any method, path, Authorization header and session cookie: it
// never panics, and a request lets through past a route that needs a token only when it
// carries one of the tokens (or its session) exactly.
func FuzzGuard(f *testing.F) {
	f.Add("GET", "/v1/runs", "Bearer "+webToken, "")
	f.Add("GET", "/v1/runs/x/export", "Bearer "+servertest.ReadToken, "")
	f.Add("POST", "/v1/runs/x/cancel", "Bearer "+servertest.ReadToken, "")
	f.Add("GET", "/v1/health", "", "")
	f.Add("GET", "/v1//runs/../runs", "bearer "+webToken, "x")
	f.Add("HEAD", "/v1/backup", "Bearer  "+webToken, hmacHex(webToken, actSessionLabel)+" ")
	s := New(nil, history.NewMemStore())
	g := newGuard(guardConfig{act: webToken, read: servertest.ReadToken, loopback: true}, nil, s)
	reached := false
	g.next = asRouted(probe{s, &reached})
	f.Fuzz(func(t *testing.T, method, path, authz, cookie string) {
		u, err := url.Parse("http://127.0.0.1:8080" + path)
		if err != nil || !validMethod(method) {
			return
		}
		r := &http.Request{Method: method, URL: u, Host: "127.0.0.1:8080", Header: http.Header{}, Body: http.NoBody}
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		if cookie != "" {
			r.Header.Set("Cookie", sessionCookie+"="+cookie)
		}
		reached = false
		g.ServeHTTP(newRecorder(), r)
		if !reached {
			return
		}
		need := s.Need(r)
		if !safeMethod(method) {
			need = AccessAct
		}
		has := AccessOpen
		switch {
		case authz == "Bearer "+webToken || authz == "" && cookie == g.actSession:
			has = AccessAct
		case authz == "Bearer "+servertest.ReadToken || authz == "" && cookie == g.readSession:
			has = AccessRead
		}
		if has < need {
			t.Fatalf("%s %q with Authorization %q, cookie %q reached a route needing %s", method, path, authz, cookie, need)
		}
	})
}

// probe records that a request got past the guard.
type probe struct {
	*Server
	reached *bool
}

func (p probe) ServeHTTP(http.ResponseWriter, *http.Request) { *p.reached = true }

func validMethod(m string) bool {
	return m != "" && !strings.ContainsFunc(m, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) })
}
