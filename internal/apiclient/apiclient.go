// Package apiclient is a small client of wend's control API over the database's unix socket,
// for the programs that drive a real `wend serve` to measure it (bench and the Temporal
// yardstick). The CLI has its own client, which maps every answer to its messages and exit
// codes; this one only starts runs, waits for them and decodes answers.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// Client talks to one control socket.
type Client struct {
	hc *http.Client
}

// Unix is a client of the control API served on the unix socket at sock. It keeps up to 256
// idle connections, so runs started together reuse theirs.
func Unix(sock string) *Client {
	t := server.UnixTransport(sock)
	t.MaxIdleConnsPerHost = 256
	return &Client{hc: &http.Client{Transport: t}}
}

// Close closes the idle connections (before the server stops, so it sees no open client).
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// With is a client that sends its requests through hc (a test's server, another transport).
func With(hc *http.Client) *Client { return &Client{hc: hc} }

// Call makes one request with body as JSON (none when nil) and decodes the answer into out
// (when not nil). An answer with another status than want is an error that carries its body.
func (c *Client) Call(ctx context.Context, method, path string, body any, want int, out any) error {
	req, err := server.NewRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// RunToEnd starts a run of the registered workflow under id (POST /v1/runs) and waits until
// it closes (GET /v1/runs/{id}/wait, a long poll the server answers when the run closes). It
// is an error unless the run started and completed.
func (c *Client) RunToEnd(ctx context.Context, id, workflow string, input json.RawMessage) error {
	var st server.Started
	if err := c.Call(ctx, "POST", "/v1/runs", engine.StartRequest{WorkflowID: id, Workflow: workflow, Input: input},
		http.StatusCreated, &st); err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	if !st.Started {
		return fmt.Errorf("start %s: not started (id taken)", id)
	}
	for {
		var o server.Outcome
		if err := c.Call(ctx, "GET", "/v1/runs/"+url.PathEscape(id)+"/wait?timeout=5m", nil, http.StatusOK, &o); err != nil {
			return fmt.Errorf("wait %s: %w", id, err)
		}
		if !o.Closed {
			continue
		}
		if o.Run.Status != history.StatusCompleted {
			return fmt.Errorf("run %s ended %s: %+v", id, o.Run.Status, o.Failure)
		}
		return nil
	}
}

// Ready is nil once GET /v1/health says ok with an engine and GET /v1/workflows lists
// workflows workflows. Both are asked because the socket answers before `serve --workflows`
// has registered them.
func (c *Client) Ready(ctx context.Context, workflows int) error {
	var h struct {
		Status string `json:"status"`
		Engine bool   `json:"engine"`
	}
	if err := c.Call(ctx, "GET", "/v1/health", nil, http.StatusOK, &h); err != nil {
		return err
	}
	if h.Status != "ok" || !h.Engine {
		return fmt.Errorf("health: %+v", h)
	}
	var w struct {
		Workflows []server.Workflow `json:"workflows"`
	}
	if err := c.Call(ctx, "GET", "/v1/workflows", nil, http.StatusOK, &w); err != nil {
		return err
	}
	if len(w.Workflows) != workflows {
		return fmt.Errorf("%d workflows registered, want %d", len(w.Workflows), workflows)
	}
	return nil
}
