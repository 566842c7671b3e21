package api

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/wendflow/wend/history"
)

// An error answer reads back as the server wrote it; a body that is not the API's (a proxy's
// page, a cut answer) is CodeInternal naming the status; the code finds its sentinel.
func TestDecodeError(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		code, msg  string
		is         error
	}{
		{"the API's error", `{"error":{"code":"not_found","message":"no workflow or run \"x\""}}`, 404, CodeNotFound, `no workflow or run "x"`, history.ErrNotFound},
		{"a closed run", `{"error":{"code":"run_closed","message":"m"}}`, 409, CodeRunClosed, "m", ErrRunClosed},
		{"a proxy's page", `<html>bad gateway</html>`, 502, CodeInternal, "server answered 502 Bad Gateway", nil},
		{"an error without a code", `{"error":{"message":"m"}}`, 500, CodeInternal, "server answered 500 Internal Server Error", nil},
		{"a cut answer", `{"error":{"code":"not_fo`, 404, CodeInternal, "server answered 404 Not Found", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := DecodeError(tc.status, []byte(tc.body))
			if e.Status != tc.status || e.Code != tc.code || e.Message != tc.msg {
				t.Fatalf("got %d %s %q, want %d %s %q", e.Status, e.Code, e.Message, tc.status, tc.code, tc.msg)
			}
			if tc.is != nil && !errors.Is(e, tc.is) {
				t.Fatalf("errors.Is(%s, %v) = false", e.Code, tc.is)
			}
			if errors.Is(e, ErrStopped) {
				t.Fatalf("errors.Is(%s, ErrStopped) = true", e.Code)
			}
		})
	}
}

// The error body's JSON is the contract docs/api.md gives: the status never travels in it.
func TestErrorBodyWire(t *testing.T) {
	b, err := json.Marshal(ErrorBody{Error: NewError(CodeIDTaken, "taken")})
	if want := `{"error":{"code":"id_taken","message":"taken"}}`; err != nil || string(b) != want {
		t.Fatalf("got %s %v, want %s", b, err, want)
	}
	if SentinelCode(errors.Join(errors.New("x"), ErrQueued)) != CodeQueued || SentinelCode(errors.New("x")) != "" {
		t.Fatal("SentinelCode does not find a wrapped sentinel, or finds one in a plain error")
	}
}
