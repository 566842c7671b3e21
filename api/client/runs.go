package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

func runPath(id, suffix string) string { return "/v1/runs/" + url.PathEscape(id) + suffix }

// List returns the runs matching q's filters, at most limit (0: all), following the API's
// pages (GET /v1/runs answers at most api.MaxListLimit runs at a time) until the last or
// until it has limit runs. q's Limit and Cursor are unused. Never nil.
func (c *Client) List(q api.ListQuery, limit int) ([]history.Run, error) {
	q.Cursor = ""
	all := []history.Run{} // not nil: `wend list --json` prints [] for none, as in process
	for {
		q.Limit = api.MaxListLimit
		if limit > 0 {
			q.Limit = min(q.Limit, limit-len(all))
		}
		var page api.RunPage
		if err := c.Do(context.Background(), "GET", "/v1/runs?"+q.Values().Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Runs...)
		if page.NextCursor == "" || (limit > 0 && len(all) >= limit) {
			return all, nil
		}
		q.Cursor = page.NextCursor
	}
}

// Show is GET /v1/runs/{id}.
func (c *Client) Show(id string) (api.RunDetail, error) {
	var d api.RunDetail
	err := c.Do(context.Background(), "GET", runPath(id, ""), nil, &d)
	return d, err
}

// Events is GET /v1/runs/{id}/events: a page of the run's history after seq after.
func (c *Client) Events(id string, after uint64) (api.EventPage, error) {
	var p api.EventPage
	err := c.Do(context.Background(), "GET", runPath(id, "/events?after="+strconv.FormatUint(after, 10)), nil, &p)
	return p, err
}

// Start is POST /v1/runs.
func (c *Client) Start(ctx context.Context, req api.StartRequest) (api.Started, error) {
	var st api.Started
	err := c.Do(ctx, "POST", "/v1/runs", req, &st)
	return st, err
}

// Signal is POST /v1/runs/{id}/signals with a name and data.
func (c *Client) Signal(ctx context.Context, id, name string, data json.RawMessage) (history.Run, error) {
	var out struct{ Run history.Run }
	err := c.Do(ctx, "POST", runPath(id, "/signals"), api.SignalRequest{Name: name, Data: data}, &out)
	return out.Run, err
}

// SendSignal is POST /v1/runs/{id}/signals with the whole request (an idempotency key).
func (c *Client) SendSignal(ctx context.Context, id string, req api.SignalRequest) (api.SignalSent, error) {
	var out api.SignalSent
	err := c.Do(ctx, "POST", runPath(id, "/signals"), req, &out)
	return out, err
}

// Query is GET /v1/runs/{id}/query: a read-only expression over the run.
func (c *Client) Query(id, expr string) (api.QueryResult, error) {
	var out api.QueryResult
	err := c.Do(context.Background(), "GET", runPath(id, "/query?expr="+url.QueryEscape(expr)), nil, &out)
	return out, err
}

// Terminate is POST /v1/runs/{id}/terminate.
func (c *Client) Terminate(ctx context.Context, id, reason string) (history.Run, error) {
	var out struct{ Run history.Run }
	err := c.Do(ctx, "POST", runPath(id, "/terminate"), history.CancelRequest{Reason: reason}, &out)
	return out.Run, err
}

// Cancel is POST /v1/runs/{id}/cancel.
func (c *Client) Cancel(ctx context.Context, id, reason string) (history.Run, error) {
	var out struct{ Run history.Run }
	err := c.Do(ctx, "POST", runPath(id, "/cancel"), history.CancelRequest{Reason: reason}, &out)
	return out.Run, err
}

// Retry is POST /v1/runs/{id}/retry.
func (c *Client) Retry(ctx context.Context, id string) (api.Retried, error) {
	var out api.Retried
	err := c.Do(ctx, "POST", runPath(id, "/retry"), struct{}{}, &out)
	return out, err
}

// Repair is POST /v1/runs/{id}/repair, or POST /v1/repair for every open run when id is "".
func (c *Client) Repair(ctx context.Context, id string) (api.RepairReport, error) {
	path := "/v1/repair"
	if id != "" {
		path = runPath(id, "/repair")
	}
	var out api.RepairReport
	err := c.Do(ctx, "POST", path, struct{}{}, &out)
	return out, err
}

// Export is GET /v1/runs/{id}/export: the run's history export (docs/api.md,
// schema wend.history-export/v1) as the server sent it. Package history/export's Document
// reads it; the client leaves that to the caller, so it builds without the run's fold.
func (c *Client) Export(id string) (json.RawMessage, error) {
	var doc json.RawMessage
	if err := c.Do(context.Background(), "GET", runPath(id, "/export"), nil, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// Wait is GET /v1/runs/{id}/wait: a long poll the server answers when the run closes or after
// timeout, whichever comes first (then the outcome says the run is not closed).
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (api.Outcome, error) {
	var o api.Outcome
	err := c.Do(ctx, "GET", runPath(id, "/wait?timeout="+timeout.String()), nil, &o)
	return o, err
}

// Check is GET /v1/check.
func (c *Client) Check() (api.CheckReport, error) {
	var rep api.CheckReport
	err := c.Do(context.Background(), "GET", "/v1/check", nil, &rep)
	return rep, err
}
