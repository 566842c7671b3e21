//go:build linux

package plugins

import (
	"context"
	"encoding/json"
	"path/filepath"
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

// TestPreparedTryChecksTheFileOnce: a try whose Prepare checked the plugin's file is not
// checked again by its call (one stat per try, not two), yet a replaced executable is still
// rolled to: by the next try's Prepare, before its call and its timeouts, and by a call that
// was not prepared.
func TestPreparedTryChecksTheFileOnce(t *testing.T) {
	v2, err := testPluginV2()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plug")
	install(t, bins.testPlugin, path)
	h, _ := newHost(t, Options{}, Config{Name: "p", Command: []string{"./plug"}, Dir: dir})
	try := func(attempt string, prepare bool, between func()) served {
		t.Helper()
		c := call("p", "version", nil)
		c.ActivityAttemptID = attempt
		if prepare {
			if err := h.Prepare(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
		if between != nil {
			between()
		}
		var v served
		out, err := h.ExecuteBuild(context.Background(), c, nil, func(sha string) { v.Build = sha })
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := try("a1", true, nil); v.Version != "dev" {
		t.Fatalf("first try on %q, want dev", v.Version)
	}
	install(t, v2, path)
	if err := h.Prepare(context.Background(), withAttempt(call("p", "version", nil), "a2")); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Rolls != 1 {
		t.Fatalf("after the next try's Prepare: %+v, want the roll done there, before the call", st)
	}
	if v := try("a2", false, nil); v.Version != "v2" {
		t.Fatalf("the try after the swap ran on %q, want v2", v.Version)
	}
	// Replaced between a try's Prepare and its call: the call runs on the build Prepare
	// checked (no second stat); the next try rolls.
	if v := try("a3", true, func() { install(t, bins.testPlugin, path) }); v.Version != "v2" {
		t.Fatalf("the prepared try ran on %q, want v2, the build its Prepare checked", v.Version)
	}
	if v := try("a4", true, nil); v.Version != "dev" {
		t.Fatalf("the next try ran on %q, want dev: the replaced file was not rolled to", v.Version)
	}
	// A call that was not prepared checks the file itself.
	install(t, v2, path)
	if v := try("a5", false, nil); v.Version != "v2" {
		t.Fatalf("an unprepared call ran on %q after the swap, want v2", v.Version)
	}
	if st := h.Stats(); st.Rolls != 3 {
		t.Fatalf("%+v, want 3 rolls", st)
	}
}

func withAttempt(c history.ActivityCall, attempt string) history.ActivityCall {
	c.ActivityAttemptID = attempt
	return c
}
