package commands

import (
	"context"
	"net/url"

	"github.com/wendflow/wend/api"
)

// The batches API (/v1/batches) over the control socket: wend serve runs batches, and the
// --where commands and wend batch reach them through it.

func batchPath(id, suffix string) string { return "/v1/batches/" + url.PathEscape(id) + suffix }

func (c *client) CreateBatch(ctx context.Context, req api.BatchRequest) (api.Batch, error) {
	var out api.Batch
	err := c.call(ctx, "POST", "/v1/batches", req, &out)
	return out, err
}

func (c *client) Batch(ctx context.Context, id string) (api.Batch, error) {
	var out api.Batch
	err := c.call(ctx, "GET", batchPath(id, ""), nil, &out)
	return out, err
}

func (c *client) Batches(ctx context.Context) ([]api.Batch, error) {
	var out struct {
		Batches []api.Batch `json:"batches"`
	}
	err := c.call(ctx, "GET", "/v1/batches", nil, &out)
	return out.Batches, err
}

func (c *client) CancelBatch(ctx context.Context, id string) (api.Batch, error) {
	var out api.Batch
	err := c.call(ctx, "POST", batchPath(id, "/cancel"), struct{}{}, &out)
	return out, err
}
