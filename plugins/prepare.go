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

// Prepare starts the call's plugin if it is not running, or a new build of it if its file
// changed; Execute then finds it ready. The file is checked here, once per try: the try's
// Execute, which follows at once, runs on the process Prepare chose unless another try rolled
// the plugin meanwhile. A file replaced after the check is seen by the next try, as one
// replaced right after Execute's own check always was.
func (h *Host) Prepare(ctx context.Context, call history.ActivityCall) error {
	if err := over(ctx, call); err != nil { // do not start a plugin for a try that cannot run
		return err
	}
	s, err := h.slot(call.Plugin)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := h.current(s, false); err != nil {
		return err
	}
	s.prepared = call.ActivityAttemptID
	return nil
}
