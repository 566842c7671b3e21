package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
)

// UnixTransport sends a client's requests to the control API on the unix socket at sock (made
// by ListenUnix), whatever host the request names.
func UnixTransport(sock string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return DialUnix(ctx, sock)
	}}
}

// NewRequest is a control API request: method on path, with in as its JSON body (none when
// in is nil). The API's Go client (server/apiclient) sends its requests so.
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
