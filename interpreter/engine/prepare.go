package engine

import (
	"context"

	"github.com/wendflow/wend/history"
)

// Preparer is implemented by Activities that must make something ready before a call can
// run, such as starting a plugin's process. The engine prepares a try before it arms the try's
// timeout and heartbeat_timeout, so a plugin's start-up (a second for a cold Python
// interpreter, far more on a loaded machine) does not count against them, as in Temporal,
// whose activity timeouts start when a worker takes the task. The preparer bounds its own
// work (the plugin host's start timeout). An error is the try's outcome, as if the call had
// returned it.
type Preparer interface {
	Prepare(ctx context.Context, call history.ActivityCall) error
}

func (e *Engine) prepare(ctx context.Context, call history.ActivityCall) error {
	p, ok := e.opts.Activities.(Preparer)
	if !ok {
		return nil
	}
	return p.Prepare(ctx, call)
}
