package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// client is the remote backend: the control API of the wend process that holds the
// database, over its unix socket.
type client struct {
	hc   *http.Client
	sock string
	pid  int // the holder's, for messages; 0 when unknown
}

// dialControl connects to the holder's socket and checks it answers.
func dialControl(dbPath string, pid int) (*client, error) {
	sock := socketPath(dbPath)
	c := &client{sock: sock, pid: pid, hc: &http.Client{Transport: server.UnixTransport(sock)}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var health struct{ Status string }
	if err := c.call(ctx, "GET", "/v1/health", nil, &health); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// call sends one request; a JSON error answer comes back as *server.Error, a broken
// connection as an error naming the holder.
func (c *client) call(ctx context.Context, method, path string, in, out any) error {
	req, err := server.NewRequest(ctx, method, path, in)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("talk to the wend process holding the database (%s) over %s: %w", c.holder(), c.sock, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read answer of the wend process holding the database (%s): %w", c.holder(), err)
	}
	if resp.StatusCode >= 300 {
		return server.DecodeError(resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode answer of the wend process holding the database (%s): %w", c.holder(), err)
		}
	}
	return nil
}

func (c *client) holder() string {
	if c.pid > 0 {
		return "pid " + strconv.Itoa(c.pid)
	}
	return "pid unknown"
}

func runPath(id, suffix string) string { return "/v1/runs/" + url.PathEscape(id) + suffix }

// List returns the runs matching q's filters, at most limit (0: all), following the API's
// pages (GET /v1/runs answers at most server.MaxListLimit runs at a time) until the last or
// until it has limit runs.
func (c *client) List(q server.ListQuery, limit int) ([]history.Run, error) {
	q.Cursor = ""
	all := []history.Run{} // not nil: `wend list --json` prints [] for none, as the local backend does
	for {
		q.Limit = server.MaxListLimit
		if limit > 0 {
			q.Limit = min(q.Limit, limit-len(all))
		}
		var page server.RunPage
		if err := c.call(context.Background(), "GET", "/v1/runs?"+q.Values().Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Runs...)
		if page.NextCursor == "" || (limit > 0 && len(all) >= limit) {
			return all, nil
		}
		q.Cursor = page.NextCursor
	}
}

func (c *client) Show(id string) (server.RunDetail, error) {
	var d server.RunDetail
	err := c.call(context.Background(), "GET", runPath(id, ""), nil, &d)
	return d, err
}

func (c *client) Events(id string, after uint64) (server.EventPage, error) {
	var p server.EventPage
	err := c.call(context.Background(), "GET", runPath(id, "/events?after="+strconv.FormatUint(after, 10)), nil, &p)
	return p, err
}

func (c *client) Start(ctx context.Context, req engine.StartRequest) (server.Started, error) {
	var st server.Started
	err := c.call(ctx, "POST", "/v1/runs", req, &st)
	return st, err
}

func (c *client) Signal(ctx context.Context, id, name string, data json.RawMessage) (history.Run, error) {
	var out struct{ Run history.Run }
	err := c.call(ctx, "POST", runPath(id, "/signals"), server.SignalRequest{Name: name, Data: data}, &out)
	return out.Run, err
}

func (c *client) SendSignal(ctx context.Context, id string, req server.SignalRequest) (server.SignalSent, error) {
	var out server.SignalSent
	err := c.call(ctx, "POST", runPath(id, "/signals"), req, &out)
	return out, err
}

func (c *client) Query(id, expr string) (server.QueryResult, error) {
	var out server.QueryResult
	err := c.call(context.Background(), "GET", runPath(id, "/query?expr="+url.QueryEscape(expr)), nil, &out)
	return out, err
}

func (c *client) Terminate(ctx context.Context, id, reason string) (history.Run, error) {
	var out struct{ Run history.Run }
	err := c.call(ctx, "POST", runPath(id, "/terminate"), history.CancelRequest{Reason: reason}, &out)
	return out.Run, err
}

func (c *client) Retry(ctx context.Context, id string) (server.Retried, error) {
	var out server.Retried
	err := c.call(ctx, "POST", runPath(id, "/retry"), struct{}{}, &out)
	return out, err
}

func (c *client) Repair(ctx context.Context, id string) (server.RepairReport, error) {
	path := "/v1/repair"
	if id != "" {
		path = runPath(id, "/repair")
	}
	var out server.RepairReport
	err := c.call(ctx, "POST", path, struct{}{}, &out)
	return out, err
}

func (c *client) Export(id string) (*export.Document, error) {
	var doc export.Document
	if err := c.call(context.Background(), "GET", runPath(id, "/export"), nil, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

func (c *client) Cancel(ctx context.Context, id, reason string) (history.Run, error) {
	var out struct{ Run history.Run }
	err := c.call(ctx, "POST", runPath(id, "/cancel"), history.CancelRequest{Reason: reason}, &out)
	return out.Run, err
}

func (c *client) Wait(ctx context.Context, id string, timeout time.Duration) (server.Outcome, error) {
	var o server.Outcome
	err := c.call(ctx, "GET", runPath(id, "/wait?timeout="+timeout.String()), nil, &o)
	return o, err
}

func (c *client) Check() (server.CheckReport, error) {
	var rep server.CheckReport
	err := c.call(context.Background(), "GET", "/v1/check", nil, &rep)
	return rep, err
}

func (c *client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}
