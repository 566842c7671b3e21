package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/wendflow/wend/api"
)

// Client talks to one wend process's control API. It is safe for concurrent use.
type Client struct {
	// Peer names the server in errors of the connection, e.g. "the wend process holding the
	// database (pid 41)"; empty: "wend". Set it before the first request.
	Peer string
	hc   *http.Client
	sock string
}

// Unix is a client of the control API on the unix socket at sock (server.ListenUnix's). It
// keeps up to 256 idle connections, so requests sent together reuse theirs.
func Unix(sock string) *Client {
	t := UnixTransport(sock)
	t.MaxIdleConnsPerHost = 256
	return &Client{hc: &http.Client{Transport: t}, sock: sock}
}

// New is a client that sends its requests through hc, whose transport decides where they go
// (the requests name host "wend"): a TCP listener, a test's server.
func New(hc *http.Client) *Client { return &Client{hc: hc} }

// Close closes the idle connections, so the server sees no open client when it stops.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Do sends one request: method on path, with in as its JSON body (none when nil), and decodes
// a successful answer into out (unless out is nil). An answer of status 300 or more is the
// server's *api.Error.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read answer of %s: %w", c.peer(), err)
	}
	if resp.StatusCode >= 300 {
		return api.DecodeError(resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode answer of %s to %s %s: %w", c.peer(), method, path, err)
		}
	}
	return nil
}

// send makes the request and returns the answer, whatever its status.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	req, err := NewRequest(ctx, method, path, in)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.sock != "" {
			return nil, fmt.Errorf("talk to %s over %s: %w", c.peer(), c.sock, err)
		}
		return nil, fmt.Errorf("talk to %s: %w", c.peer(), err)
	}
	return resp, nil
}

func (c *Client) peer() string {
	if c.Peer == "" {
		return "wend"
	}
	return c.Peer
}
