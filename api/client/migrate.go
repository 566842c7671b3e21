package client

import (
	"context"

	"github.com/wendflow/wend/api"
)

// Migrate is POST /v1/runs/{id}/migrate.
func (c *Client) Migrate(ctx context.Context, id string, req api.MigrateRequest) (api.MigrateResult, error) {
	var out api.MigrateResult
	err := c.Do(ctx, "POST", runPath(id, "/migrate"), req, &out)
	return out, err
}
