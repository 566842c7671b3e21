package cli

import (
	"context"
	"strconv"
	"time"

	"github.com/wendflow/wend/server/apiclient"
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

// call sends one request; a JSON error answer comes back as *server.Error, a broken
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
