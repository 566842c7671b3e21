package cli

import (
	"context"
	"net/url"

	"github.com/wendflow/wend/server"
)

// Migrate is POST /v1/runs/{id}/migrate over the control socket (wend migrate through wend serve).
func (c *client) Migrate(ctx context.Context, id string, req server.MigrateRequest) (server.MigrateResult, error) {
	var out server.MigrateResult
	err := c.call(ctx, "POST", "/v1/runs/"+url.PathEscape(id)+"/migrate", req, &out)
	return out, err
}
