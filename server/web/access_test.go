package web

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
)

// openRoutes are the only routes a tokenless request reaches on loopback: none returns run
// data. A route added as open fails TestEveryRouteNeedsItsToken until it is listed here.
var openRoutes = map[string]bool{
	"GET /v1/health": true, "GET /metrics": true, "GET /ui/static/": true,
	"GET /ui/login": true, "GET /{$}": true, "GET /ui/{$}": true,
}

// actReads are the GET routes that need the act token: a backup is the whole database.
var actReads = map[string]bool{"GET /v1/backup": true}

// allowed says the guard let a request through: whatever the route answered then (200, a
// 404 for a name, a 400 for an empty body), it was not a refusal of the token.
func allowed(code int) bool { return code != http.StatusUnauthorized && code != http.StatusForbidden }

// TestEveryRouteNeedsItsToken visits every route the listener serves (its list comes from
// the routers, so a new route is in it) with no token, the read token and the act token, by
// bearer and by session: an open route answers all, a read route refuses no token (401), an
// act route refuses no token (401) and the read token (403).
func TestEveryRouteNeedsItsToken(t *testing.T) {
	f := newWebFixture(t)
	f.start("e1", webEchoSpec) // a closed run: its wait answers at once
	f.settle("e1", closed)
	routes := f.tcp.Routes()
	if len(routes) < 40 {
		t.Fatalf("%d routes listed; the API and the UI have more", len(routes))
	}
	seen := map[string]bool{}
	for _, rt := range routes {
		seen[rt.Pattern] = true
		method, path := servertest.RouteRequest(rt.Pattern, "e1")
		t.Run(rt.Pattern, func(t *testing.T) {
			safe := method == http.MethodGet || method == http.MethodHead
			switch {
			case openRoutes[rt.Pattern] != (rt.Access == server.AccessOpen):
				t.Fatalf("access %s; open are exactly %v", rt.Access, openRoutes)
			case !safe && rt.Access != server.AccessAct:
				t.Fatalf("%s route is %s; every mutation needs the act token", method, rt.Access)
			case safe && rt.Access == server.AccessAct && !actReads[rt.Pattern]:
				t.Fatalf("GET route needs the act token but is not listed in actReads")
			}
			for _, who := range []struct {
				name string
				r    req
				ok   bool // the guard lets it through
				code int  // else this refusal
			}{
				{"no token", req{}, rt.Access == server.AccessOpen, http.StatusUnauthorized},
				{"read token", req{Header: servertest.ReadBearer()}, rt.Access != server.AccessAct, http.StatusForbidden},
				{"read session", req{ReadSession: true, Header: sameOrigin(f)}, rt.Access != server.AccessAct, http.StatusForbidden},
				{"act token", req{Header: bearer()}, true, 0},
			} {
				who.r.Method, who.r.Path = method, path
				code, _, body := f.send(who.r)
				if who.ok && !allowed(code) || !who.ok && code != who.code {
					t.Errorf("%s %s with %s: %d %.200s (want %s)", method, path, who.name, code, body, want(who.ok, who.code))
				}
			}
		})
	}
	for p := range openRoutes {
		if !seen[p] {
			t.Errorf("open route %s is no longer served: drop it from openRoutes", p)
		}
	}
}

func want(ok bool, code int) string {
	if ok {
		return "neither 401 nor 403"
	}
	return http.StatusText(code)
}

// sameOrigin is what a browser's form post from the UI carries.
func sameOrigin(f *webFixture) map[string]string {
	return map[string]string{"Origin": f.base, "Content-Type": "application/x-www-form-urlencoded"}
}

// TestAnotherLocalUserGetsNoRunData plays another user of the machine, who can reach the
// loopback port but holds no token: on every route, without a token, with a guessed one or
// a forged session cookie, the answer is 401 wherever a route returns data, and no answer
// carries the run's input.
func TestAnotherLocalUserGetsNoRunData(t *testing.T) {
	f := newWebFixture(t)
	const card = "4111111111111111"
	if _, err := f.srv.Start(context.Background(), engine.StartRequest{WorkflowID: "card-1", SpecFile: filepath.Join(f.dir, "w.wend.yaml"),
		Source: waitSpec, Input: json.RawMessage(`{"who":"` + card + `"}`)}); err != nil {
		t.Fatal(err)
	}
	f.settle("card-1", waitingForSignal)
	if _, _, body := f.send(req{Method: "GET", Path: "/v1/runs/card-1/export", Header: servertest.ReadBearer()}); !strings.Contains(body, card) {
		t.Fatalf("the export lacks the input even with the read token: %.300s", body)
	}
	attackers := []struct {
		name   string
		header map[string]string
	}{
		{"no token", nil},
		{"a guessed token", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 32)}},
		{"the token in another scheme", map[string]string{"Authorization": "Basic " + servertest.Token}},
		{"a forged session", map[string]string{"Cookie": "wend_session=" + strings.Repeat("a", 64)}},
		{"Host localhost", map[string]string{"Host": "localhost"}},
	}
	for _, rt := range f.tcp.Routes() {
		method, path := servertest.RouteRequest(rt.Pattern, "card-1")
		for _, a := range attackers {
			code, _, body := f.send(req{Method: method, Path: path, Header: a.header})
			if rt.Access != server.AccessOpen && code != http.StatusUnauthorized {
				t.Errorf("%s %s with %s: %d, want 401", method, path, a.name, code)
			}
			if strings.Contains(body, card) {
				t.Errorf("%s %s with %s: the answer carries the run's input", method, path, a.name)
			}
		}
	}
}
