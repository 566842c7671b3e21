package server

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

func TestCheckTokenIssue12Item10(t *testing.T) {
	for _, tc := range []struct{ token, want string }{
		{"s3cr3", "the token is 5 characters; a token needs at least 128 bits"},
		{"0123456789abcdef0123456789abcde", "the token is 31 hex digits"},
		{"0123456789abcdef0123456789abcdef", ""},
		{"Zm9vYmFyYmF6cXV4cXV1eDE", ""}, // 23 base64 characters
		{"Zm9vYmFyYmF6cXV4cXV1e", "the token is 21 characters"},
		{strings.Repeat("ab", 20), "the token has only 2 distinct characters"},
		{"Zm9vYmFyYmF6cXV4 cXV1eDE", "space or control character"},
		{webToken, ""},
	} {
		err := CheckToken(tc.token)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckToken(%q) = %v, want %q", tc.token, err, tc.want)
		}
	}
	// A non-loopback listener is guarded by its token alone: a weak one is refused.
	s := New(nil, history.NewMemStore())
	if _, err := ListenTCP(s, TCPOptions{Addr: "0.0.0.0:0", Token: "s3cr3", AllowRemote: true}); err == nil || !strings.Contains(err.Error(), "at least 128 bits") {
		t.Errorf("--allow-remote with a 5-character token: %v", err)
	}
}

// The UI's Content-Security-Policy names only directives CSP defines (it said form-runAction
// where form-action was meant, so forms were not held to this origin).
func TestCSPHeaderIssue12Item10(t *testing.T) {
	f := newWebFixture(t)
	_, h, _ := f.send(req{method: "GET", path: "/ui/runs", session: true})
	known := map[string]bool{"default-src": true, "script-src": true, "style-src": true, "img-src": true, "connect-src": true,
		"form-action": true, "frame-ancestors": true, "base-uri": true}
	got := map[string]string{}
	for _, d := range strings.Split(h.Get("Content-Security-Policy"), ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if !known[name] {
			t.Errorf("unknown CSP directive %q", name)
		}
		got[name] = value
	}
	if got["form-action"] != "'self'" || got["default-src"] != "'none'" || got["frame-ancestors"] != "'none'" {
		t.Errorf("CSP %q: want form-action 'self', default-src 'none', frame-ancestors 'none'", h.Get("Content-Security-Policy"))
	}
}
