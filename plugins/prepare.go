package plugins

import (
	"context"

	"github.com/wendflow/wend/history"
)

// Prepare starts the call's plugin if it is not running (engine.Preparer), so the engine
// arms a try's timeouts only once the plugin can take the call: its start-up, bounded by
// Options.StartTimeout, never counts against heartbeat_timeout or timeout.
func (r *Router) Prepare(ctx context.Context, call history.ActivityCall) error {
	h, err := r.host(call.Plugin, call.Declared)
	if err != nil {
		return err
	}
	return h.Prepare(ctx, call)
}

// Prepare starts the call's plugin if it is not running; Execute then finds it ready.
func (h *Host) Prepare(ctx context.Context, call history.ActivityCall) error {
	if err := over(ctx, call); err != nil { // do not start a plugin for a try that cannot run
		return err
	}
	_, err := h.process(call.Plugin)
	return err
}
