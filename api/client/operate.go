package client

import (
	"context"
	"fmt"
	"io"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// RollPlugins is POST /v1/plugins/roll: the server rolls its running plugins (all when
// plugin is "").
func (c *Client) RollPlugins(ctx context.Context, plugin string) (api.Rolled, error) {
	var out api.Rolled
	err := c.Do(ctx, "POST", "/v1/plugins/roll", api.RollRequest{Plugin: plugin}, &out)
	return out, err
}

// PurgeSelect is POST /v1/purge/select: the runs a purge by f would delete.
func (c *Client) PurgeSelect(f history.PurgeFilter) ([]history.Run, error) {
	var out api.Purged
	err := c.Do(context.Background(), "POST", "/v1/purge/select", f, &out)
	return out.Runs, err
}

// Purge is POST /v1/purge: the server deletes the runs ids names.
func (c *Client) Purge(ctx context.Context, ids []string) ([]history.Run, error) {
	var out api.Purged
	err := c.Do(ctx, "POST", "/v1/purge", api.PurgeRequest{RunIDs: ids}, &out)
	return out.Runs, err
}

// Backup receives the server's copy of its database (GET /v1/backup) into w. A body shorter
// than its Content-Length (the server failed or stopped midway) is an error.
func (c *Client) Backup(w io.Writer) (int64, error) {
	resp, err := c.send(context.Background(), "GET", "/v1/backup", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		return 0, api.DecodeError(resp.StatusCode, b)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("receive the copy from %s: %w", c.peer(), err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, fmt.Errorf("receive the copy from %s: %d of %d bytes", c.peer(), n, resp.ContentLength)
	}
	return n, nil
}
