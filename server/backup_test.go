package server

import (
	"net/http"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/server/internal/servertest"
)

// TestBackupNeedsTheToken: over TCP a backup needs the act token, even on loopback: without
// it, or with the read token, it is refused; with it, it reaches the store (the fixture's cannot back up).
func TestBackupNeedsTheToken(t *testing.T) {
	f := newWebFixture(t)
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
		code   string
	}{
		{"no token", nil, http.StatusUnauthorized, api.CodeUnauthorized},
		{"read token", servertest.ReadBearer(), http.StatusForbidden, api.CodeForbidden},
		{"act token", bearer(), http.StatusNotImplemented, api.CodeUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := f.send(req{Method: "GET", Path: "/v1/backup", Header: tc.header})
			if status != tc.status || errorCode(body) != tc.code {
				t.Fatalf("GET /v1/backup: %d %s, want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
}
