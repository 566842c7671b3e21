package plugins

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func idleLanes(t *testing.T, h *Host, plugin string) (on bool, idle int) {
	t.Helper()
	p, err := h.process(plugin)
	if err != nil {
		t.Fatal(err)
	}
	p.lanes.mu.Lock()
	defer p.lanes.mu.Unlock()
	return p.lanes.on, len(p.lanes.idle)
}

// The Go SDK serves lanes: sequential calls share one stream, and a try that was stopped does
// not give its lane back (a Cancel may still be in flight on it).
func TestLanesReused(t *testing.T) {
	h, logs := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	for i := range 5 {
		if _, err := h.Execute(context.Background(), call("demo", "greet", map[string]string{"name": "x"}), nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if on, idle := idleLanes(t, h, "demo"); !on || idle != 1 {
		t.Fatalf("after 5 sequential calls: lanes on=%v idle=%d, want on and 1 (%s)", on, idle, logs)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("stop")) })
	_, err := h.Execute(ctx, call("demo", "sleep", map[string]int{"ms": 10000}), nil)
	if ae := activityError(t, err); ae.Type != TypeCancelled {
		t.Fatalf("got %v", ae)
	}
	if _, idle := idleLanes(t, h, "demo"); idle != 0 {
		t.Fatalf("a cancelled try's lane went back to the pool (idle=%d)", idle)
	}
	if _, err := h.Execute(context.Background(), call("demo", "greet", map[string]string{"name": "y"}), nil); err != nil {
		t.Fatal(err)
	}
	if _, idle := idleLanes(t, h, "demo"); idle != 1 {
		t.Fatalf("idle=%d after a call on a new lane, want 1", idle)
	}

	// A plugin error is the plugin's own answer: the lane stays usable.
	_, err = h.Execute(context.Background(), call("demo", "fail", map[string]any{"type": "Boom", "message": "no"}), nil)
	if ae := activityError(t, err); ae.Type != "Boom" {
		t.Fatalf("got %v", ae)
	}
	if _, idle := idleLanes(t, h, "demo"); idle != 1 {
		t.Fatalf("idle=%d after a plugin error, want 1", idle)
	}
}

// Plugins without Lane (the Python and Node examples) are called through Execute, and the
// probe that found out logs nothing.
func TestLanesFallBackToExecute(t *testing.T) {
	for _, cfg := range exampleConfigs(t)[1:] {
		t.Run(cfg.Name, func(t *testing.T) {
			h, logs := newHost(t, Options{}, cfg)
			for range 3 {
				if _, err := h.Execute(context.Background(), call(cfg.Name, "greet", map[string]string{"name": "x"}), nil); err != nil {
					t.Fatal(err)
				}
			}
			if on, idle := idleLanes(t, h, cfg.Name); on || idle != 0 {
				t.Fatalf("lanes on=%v idle=%d for a plugin without Lane", on, idle)
			}
			if strings.Contains(logs.String(), "Lane") {
				t.Fatalf("probe logged: %s", logs)
			}
		})
	}
}

// Concurrent calls open a lane each and keep at most maxIdleLanes of them.
func TestLanesBounded(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	n := maxIdleLanes + 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := h.Execute(context.Background(), call("demo", "sleep", map[string]int{"ms": 300}), nil)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, idle := idleLanes(t, h, "demo"); idle != maxIdleLanes {
		t.Fatalf("idle=%d after %d concurrent calls, want %d", idle, n, maxIdleLanes)
	}
}
