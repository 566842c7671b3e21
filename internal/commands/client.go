package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	apiclient "github.com/wendflow/wend/api/client"
	"github.com/wendflow/wend/history/export"
)

// client is the remote backend: the control API of the wend process that holds the
// database, over its unix socket. Its run methods are apiclient.Client's (server.Server's
// over HTTP); pid names the holder in messages.
type client struct {
	*apiclient.Client
	pid int // the holder's; 0 when unknown
}

// dialControl connects to the holder's socket and checks it answers.
func dialControl(dbPath string, pid int) (*client, error) {
	c := newClient(socketPath(dbPath), pid)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := c.Health(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// newClient is a client of the holder's socket, named in errors as the process holding the
// database.
func newClient(sock string, pid int) *client {
	c := &client{Client: apiclient.Unix(sock), pid: pid}
	c.Peer = "the wend process holding the database (" + c.holder() + ")"
	return c
}

// Export is the client's export decoded into the Document the in-process backend returns.
func (c *client) Export(id string) (*export.Document, error) {
	raw, err := c.Client.Export(id)
	if err != nil {
		return nil, err
	}
	var doc export.Document
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode the export of %s: %w", id, err)
	}
	return &doc, nil
}

// call sends one request; a JSON error answer comes back as *api.Error, a broken
// connection as an error naming the holder.
func (c *client) call(ctx context.Context, method, path string, in, out any) error {
	return c.Do(ctx, method, path, in, out)
}

func (c *client) holder() string {
	if c.pid > 0 {
		return "pid " + strconv.Itoa(c.pid)
	}
	return "pid unknown"
}
