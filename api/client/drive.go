package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// Health is GET /v1/health: "ok" or why the engine stopped, the server's pid, and whether it
// drives runs (an engine) or only reads them.
type Health struct {
	Status string `json:"status"`
	PID    int    `json:"pid"`
	Engine bool   `json:"engine"`
}

// Health asks the server how it is.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.Do(ctx, "GET", "/v1/health", nil, &h)
	return h, err
}

// Ready is nil once GET /v1/health says ok with an engine and, when workflows > 0, GET
// /v1/workflows lists that many: the socket answers before `wend serve --workflows` has
// registered them.
func (c *Client) Ready(ctx context.Context, workflows int) error {
	h, err := c.Health(ctx)
	if err != nil {
		return err
	}
	if h.Status != "ok" || !h.Engine {
		return fmt.Errorf("health: %+v", h)
	}
	if workflows <= 0 {
		return nil
	}
	var w struct {
		Workflows []api.Workflow `json:"workflows"`
	}
	if err := c.Do(ctx, "GET", "/v1/workflows", nil, &w); err != nil {
		return err
	}
	if len(w.Workflows) != workflows {
		return fmt.Errorf("%d workflows registered, want %d", len(w.Workflows), workflows)
	}
	return nil
}

// RunToEnd starts a run of the registered workflow under id and waits until it closes, as a
// client of `wend serve` does: POST /v1/runs, then GET /v1/runs/{id}/wait until it answers
// closed. It is an error unless the run started and completed.
func (c *Client) RunToEnd(ctx context.Context, id, workflow string, input json.RawMessage) error {
	st, err := c.Start(ctx, api.StartRequest{WorkflowID: id, Workflow: workflow, Input: input})
	if err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	if !st.Started {
		return fmt.Errorf("start %s: not started (id taken)", id)
	}
	for {
		o, err := c.Wait(ctx, id, 5*time.Minute)
		if err != nil {
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
