package server

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

func TestCheckToken(t *testing.T) {
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
