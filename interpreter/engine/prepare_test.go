package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// lazyActs is an Activities whose "process" starts on first use and takes startup of virtual
// time to do so, as the plugin host starts a plugin: in Prepare when the engine asks, else
// inside Execute.
type lazyActs struct {
	clock   *FakeClock
	startup time.Duration
	failErr error

	mu      sync.Mutex
	started bool
}

func (a *lazyActs) start() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failErr != nil {
		return a.failErr
	}
	if !a.started {
		a.clock.Advance(a.startup) // the start-up: fires whatever timers are armed by then
		a.started = true
	}
	return nil
}

func (a *lazyActs) Execute(ctx context.Context, c history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	if err := a.start(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return json.RawMessage(`"done"`), nil
}

type preparingActs struct{ *lazyActs }

func (a preparingActs) Prepare(ctx context.Context, c history.ActivityCall) error { return a.start() }

// TestPluginStartupNotCountedAgainstHeartbeatTimeout: a plugin whose start takes longer than
// the step's heartbeat_timeout and timeout still completes its first try, because the engine
// prepares the plugin before it arms the try's timers. Without Preparer (the old behaviour)
// the start-up counted, and the try timed out before the plugin could heartbeat.
func TestPluginStartupNotCountedAgainstHeartbeatTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare bool
		want    string
	}{
		{"prepared before the timers", true, history.StatusCompleted},
		{"started inside the call (no Preparer)", false, history.StatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.e.Close()
			lazy := &lazyActs{clock: h.clock, startup: 5 * time.Second}
			var acts Activities = lazy
			if tc.prepare {
				acts = preparingActs{lazy}
			}
			h.e = New(Options{Store: h.store, Activities: acts, Clock: h.clock, Logf: t.Logf})
			t.Cleanup(func() { h.e.Close() })
			f := h.write("w.wend.yaml", head+"steps: [{activity: p.slowstart, heartbeat_timeout: 1s, timeout: 2s, retry: {tries: 1}}]\n")
			h.start(f, "w", "null")
			r := waitNoAdvance(t, h.e, "w") // virtual time moves only by the start-up
			if r.Status != tc.want {
				evs, _ := h.store.Events(r.RunID, 0)
				t.Fatalf("status %s, want %s; events %v", r.Status, tc.want, evs)
			}
		})
	}
}

// TestPrepareErrorIsTheTrysOutcome: a plugin that cannot start fails the try with the start
// error, as a failing call would.
func TestPrepareErrorIsTheTrysOutcome(t *testing.T) {
	h := newHarness(t)
	h.e.Close()
	lazy := &lazyActs{clock: h.clock, failErr: &history.ActivityError{Category: history.CategoryInternal, Type: "PluginExited", NonRetryable: true, Message: "start plugin p: exited before the handshake"}}
	h.e = New(Options{Store: h.store, Activities: preparingActs{lazy}, Clock: h.clock, Logf: t.Logf})
	t.Cleanup(func() { h.e.Close() })
	f := h.write("w.wend.yaml", head+"steps: [{activity: p.broken, heartbeat_timeout: 1s}]\n")
	h.start(f, "w", "null")
	r := waitNoAdvance(t, h.e, "w")
	if r.Status != history.StatusFailed || h.output(r) != "failed: start plugin p: exited before the handshake" {
		t.Fatalf("status %s, %s", r.Status, h.output(r))
	}
}

// waitNoAdvance waits for a run to close without moving virtual time (a hang guard of 10 s).
func waitNoAdvance(t *testing.T, e *Engine, id string) history.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := e.WaitClosed(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return r
}
