package plugins

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// changed; Execute then finds it ready. A start that failed for a reason that may pass is
// tried again after each of Options.StartBackoff. The file is checked here, once per try: the try's
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
	backoff := h.opts.StartBackoff
	for i := 0; ; i++ {
		err := h.prepareOnce(s, call)
		if err == nil || !startMayPass(err) {
			return err
		}
		if i == len(backoff) {
			return startsFailed(err, i+1)
		}
		h.opts.Log(call.Plugin, fmt.Sprintf("%v; starting it again in %s (start %d of %d)", err, backoff[i], i+2, len(backoff)+1))
		t := time.NewTimer(backoff[i])
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		if e := over(ctx, call); e != nil {
			return e
		}
	}
}

func (h *Host) prepareOnce(s *slot, call history.ActivityCall) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := h.current(s, false); err != nil {
		return err
	}
	s.prepared = call.ActivityAttemptID
	return nil
}

// startMayPass says whether err is a failed start that a later start may not repeat.
func startMayPass(err error) bool {
	var ae *history.ActivityError
	return errors.As(err, &ae) && ae.Category == history.CategoryPluginStart && !ae.NonRetryable
}

// startsFailed is the last start's failure, saying how many starts there were.
func startsFailed(err error, starts int) error {
	var ae *history.ActivityError
	if !errors.As(err, &ae) {
		return err
	}
	out := *ae
	out.Message = fmt.Sprintf("%s (%d starts failed)", ae.Message, starts)
	return &out
}
