// Package servertest holds what the tests of package server and of its leaves (server/web,
// server/metrics) share: a fake of the plugins, the workflows they run, and an HTTP client
// that sees redirects and sessions as a browser would. Tests only; it imports nothing of
// package server, so server's own tests can use it.
package servertest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// Token is the TCP listener's act token in tests; ReadToken its read token.
const (
	Token     = "test-token-0123456789abcdef"
	ReadToken = "test-read-token-0123456789abcdef"
)

// Acts plays the plugins: "fail" fails for good with the message it is given (else
// "declined"), "flaky" fails in a way a retry may fix, "recovers" fails its first two tries
// and then echoes, everything else echoes its input.
type Acts struct{}

// Execute is the engine's Activities port.
func (Acts) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	switch c.Activity {
	case "fail":
		in := struct{ Message string }{Message: "declined"}
		_ = json.Unmarshal(c.Input, &in)
		return nil, &history.ActivityError{Type: "CardDeclined", Message: in.Message, NonRetryable: true}
	case "flaky":
		return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
	case "recovers":
		if c.Attempt < 3 {
			return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
		}
	}
	return c.Input, nil
}

// The workflows the tests run, by what they do.
const (
	// WaitSpec greets input.who, then waits for the signal approve.
	WaitSpec = `wend: v1
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
	// FailSpec fails for good in its one activity, with markup in the message.
	FailSpec = `wend: v1
name: failing
plugins: {demo: ./demo}
steps:
  - id: charge
    activity: demo.fail
    with: {message: "card <b>declined</b>"}
`
	// FlakySpec's activity fails each try and retries after an hour.
	FlakySpec = `wend: v1
name: flaky
plugins: {demo: ./demo}
steps:
  - id: call
    activity: demo.flaky
    retry: {tries: 3, backoff: [1h]}
`
	// EchoSpec returns a script tag its activity echoed.
	EchoSpec = `wend: v1
name: echo
plugins: {demo: ./demo}
steps:
  - id: evil
    activity: demo.echo
    with: {html: "<script>alert(1)</script>"}
output: {html: "${{ steps.evil.output.html }}"}
`
)

// Req is one request of a table.
type Req struct {
	Method, Path, Body string
	Header             map[string]string // "Host" sets the request's Host
	Session            bool              // send the act session's cookie (Client.Login)
	ReadSession        bool              // send the read session's cookie (Client.LoginRead)
}

// Client sends requests to a listener at Base without following redirects, so a test sees
// each answer as it came.
type Client struct {
	T       *testing.T
	Base    string // e.g. http://127.0.0.1:8080
	jar     []*http.Cookie
	readJar []*http.Cookie
}

// Send makes the request and returns status, headers and body.
func (c *Client) Send(r Req) (int, http.Header, string) {
	c.T.Helper()
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	hr, err := http.NewRequest(r.Method, c.Base+r.Path, body)
	if err != nil {
		c.T.Fatal(err)
	}
	for k, v := range r.Header {
		if k == "Host" {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	if r.Session {
		for _, ck := range c.Login() {
			hr.AddCookie(ck)
		}
	}
	if r.ReadSession {
		for _, ck := range c.LoginRead() {
			hr.AddCookie(ck)
		}
	}
	resp, err := noRedirects.Do(hr)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Login trades Token for the session cookie once, as a browser following the link wend
// serve prints does, and returns the cookie.
func (c *Client) Login() []*http.Cookie {
	c.T.Helper()
	if c.jar == nil {
		c.jar = c.login(Token)
	}
	return c.jar
}

// LoginRead is Login with ReadToken.
func (c *Client) LoginRead() []*http.Cookie {
	c.T.Helper()
	if c.readJar == nil {
		c.readJar = c.login(ReadToken)
	}
	return c.readJar
}

func (c *Client) login(token string) []*http.Cookie {
	c.T.Helper()
	resp, err := noRedirects.Get(c.Base + "/ui/login?token=" + token)
	if err != nil {
		c.T.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("login: %d", resp.StatusCode)
	}
	return resp.Cookies()
}

// Bearer is the header that carries Token.
func Bearer() map[string]string { return map[string]string{"Authorization": "Bearer " + Token} }

// ReadBearer is the header that carries ReadToken.
func ReadBearer() map[string]string { return map[string]string{"Authorization": "Bearer " + ReadToken} }

// RouteRequest is a request that reaches a route's pattern (http.ServeMux's syntax): its
// method (GET when the pattern names none) and its path, every wildcard filled with fill and
// a trailing-slash subtree with fill as its last element.
func RouteRequest(pattern, fill string) (method, path string) {
	method, path = http.MethodGet, pattern
	if m, p, ok := strings.Cut(pattern, " "); ok {
		method, path = m, p
	}
	var b strings.Builder
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		b.WriteByte('/')
		switch {
		case seg == "{$}":
		case strings.HasPrefix(seg, "{"):
			b.WriteString(fill)
		default:
			b.WriteString(seg)
		}
	}
	out := b.String()
	if strings.HasSuffix(path, "/") {
		out = strings.TrimSuffix(out, "/") + "/" + fill
	}
	return method, out
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Settle polls show until cond holds of its answer and returns that answer; after 10 seconds
// (a loaded machine's worst, not a latency bound) it fails the test with the last one.
func Settle[D any](t *testing.T, show func() (D, error), cond func(D) bool) D {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := show()
		if err == nil && cond(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met: %+v, %v", d, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Form encodes v as a session's form post from origin ("" for none), with the CSRF value csrf
// gives unless v sets one ("-" for none), and returns the body and its headers.
func Form(v url.Values, csrf func() string, origin string) (string, map[string]string) {
	if v.Get("csrf") == "-" {
		v.Del("csrf")
	} else if !v.Has("csrf") {
		v.Set("csrf", csrf())
	}
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if origin != "" {
		h["Origin"] = origin
	}
	return v.Encode(), h
}
