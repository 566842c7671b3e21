package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
)

// UnixTransport sends a client's requests to the control API on the unix socket at sock (made
// by server.ListenUnix), whatever host the request names.
func UnixTransport(sock string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return DialUnix(ctx, sock)
	}}
}

// NewRequest is a control API request: method on path, with in as its JSON body (none when
// in is nil). The Client sends its requests so.
func NewRequest(ctx context.Context, method, path string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://wend"+path, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// DialUnix connects to a socket made by server.ListenUnix.
func DialUnix(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", SocketAddr(path))
}

// maxSunPath is the room for a socket path in sockaddr_un (108 on Linux, 104 on BSDs),
// less the terminating NUL.
const maxSunPath = 103

// SocketAddr shortens a socket path too long for sockaddr_un to one relative to the working
// directory when that fits (server.ListenUnix listens there, DialUnix dials it); the
// kernel resolves a relative socket path from there.
func SocketAddr(path string) string {
	if len(path) <= maxSunPath {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && len(rel) < len(path) {
		return rel
	}
	return path
}
