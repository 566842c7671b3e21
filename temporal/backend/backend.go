// Package backend answers wend's run commands (list, show, history, export, query, run,
// signal, cancel, terminate, retry, wait, check, and schedule through ScheduleOps) from a
// Temporal cluster: it implements server.Backend over a Temporal client, so
// `wend ... --temporal HOST:PORT` prints what the same command prints locally. A run's wend
// history is the wend.events query of its workflow (a worker answers it, for closed runs
// too); its record comes from Describe and the memo the start wrote.
package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// Options say which cluster to use.
type Options struct {
	HostPort  string
	Namespace string // default wire.DefaultNamespace
	TaskQueue string // where new runs start; default wire.DefaultTaskQueue
	// Client, when set, is used instead of dialing HostPort (in-process tests); Close leaves it open.
	Client client.Client
	// CallTimeout bounds each call to the cluster (a query waits for a worker). Default 15s.
	CallTimeout time.Duration
}

// Backend is server.Backend on a Temporal cluster.
type Backend struct {
	c       client.Client
	ns, tq  string
	timeout time.Duration
	own     bool // Close closes c
}

var (
	_ server.Backend = (*Backend)(nil)
	_ server.Cluster = (*Backend)(nil) // wend serve --temporal
)

// Dial connects to the cluster.
func Dial(o Options) (*Backend, error) {
	if o.Namespace == "" {
		o.Namespace = wire.DefaultNamespace
	}
	if o.TaskQueue == "" {
		o.TaskQueue = wire.DefaultTaskQueue
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 15 * time.Second
	}
	b := &Backend{c: o.Client, ns: o.Namespace, tq: o.TaskQueue, timeout: o.CallTimeout}
	if b.c == nil {
		c, err := client.Dial(client.Options{HostPort: o.HostPort, Namespace: o.Namespace, Logger: quiet{}})
		if err != nil {
			return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", o.HostPort, o.Namespace, err)
		}
		b.c, b.own = c, true
	}
	return b, nil
}

// Close closes the connection it dialed.
func (b *Backend) Close() error {
	if b.own {
		b.c.Close()
	}
	return nil
}

func (b *Backend) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.timeout)
}

// notFound is the local "no workflow or run" error.
func notFound(id string) error { return server.UnknownRun(id) }

// clusterError keeps a Temporal error's text as an internal error (exit 2: I/O trouble),
// or a not-found as the local one.
func clusterError(id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return notFound(id)
	}
	var se *api.Error
	if errors.As(err, &se) {
		return se
	}
	return api.NewError(api.CodeInternal, err.Error())
}

// closedError is the local refusal to steer a finished run.
func closedError(r history.Run, why string) error {
	return api.NewError(api.CodeRunClosed, fmt.Sprintf("run %s of %s is %s: %s", r.RunID, r.WorkflowID, r.Status, why))
}

// quiet drops the SDK's log lines: a CLI command prints its own messages.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
