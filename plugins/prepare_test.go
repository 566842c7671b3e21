package plugins

import (
	"context"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

var _ engine.Preparer = (*Router)(nil) // the engine prepares through the router it is given

// TestPrepareStartsThePlugin: Prepare starts the plugin, the call then runs on that process
// without starting another, and a plugin that cannot start fails Prepare with its start error.
func TestPrepareStartsThePlugin(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}}, testPlugin("bad", "exit"))
	if err := h.Prepare(context.Background(), call("demo", "greet", map[string]string{"name": "x"})); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Processes != 1 || st.Starts != 1 {
		t.Fatalf("after Prepare: %+v, want one process started", st)
	}
	if _, err := h.Execute(context.Background(), call("demo", "greet", map[string]string{"name": "x"}), nil); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Starts != 1 {
		t.Fatalf("after Execute: %+v, want the prepared process reused", st)
	}
	err := h.Prepare(context.Background(), call("bad", "noop", nil))
	if ae := activityError(t, err); ae.Type != TypeExited {
		t.Fatalf("Prepare of a plugin that exits: %v", ae)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ae := activityError(t, h.Prepare(ctx, call("demo", "greet", nil))); ae.Category != history.CategoryCancelled {
		t.Fatalf("Prepare for a cancelled try: %v", ae)
	}
}
