//go:build linux

package plugins

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// A start that fails for a reason that may pass is tried again inside the try's Prepare, with
// the host's start backoff, so it does not become the try's outcome; a plugin's own
// start_timeout (Config.StartTimeout) bounds each start instead of the host's; a start that
// keeps failing ends as a start failure that says how many starts there were; one that cannot
// pass (the plugin exits) is not tried again.
func TestPrepareStartsAgainAfterAStartThatMayPass(t *testing.T) {
	hangFirst := func(name string) Config {
		c := testPlugin(name, "")
		c.Env = append(c.Env, "WEND_TESTPLUGIN_HANG_FIRST="+filepath.Join(t.TempDir(), "started"))
		c.StartTimeout = time.Second // the host's is a minute: the first start would hang that long
		return c
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		backoff []time.Duration
		starts  int    // starts tried
		errType string // "": Prepare succeeds
		errText string
	}{
		{"the second start serves", hangFirst("p"), []time.Duration{10 * time.Millisecond}, 2, "", ""},
		{"no start serves", testPlugin("p", "nohandshake"), []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}, 3,
			TypeStartTimeout, "no handshake within 1s; killed it (a slow start on a busy machine: start_timeout: 2m in the plugin's declaration allows more)"},
		{"no backoff: one start", hangFirst("p"), []time.Duration{}, 1, TypeStartTimeout, "(1 starts failed)"},
		{"a start that cannot pass", testPlugin("p", "exit"), []time.Duration{10 * time.Millisecond}, 1, TypeExited, "exited before the handshake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.StartTimeout == 0 {
				cfg.StartTimeout = time.Second
			}
			h, logs := newHost(t, Options{StartTimeout: time.Minute, StartBackoff: tc.backoff}, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := h.Prepare(ctx, call("p", "echo", 1))
			if got := strings.Count(logs.String(), "starting it again"); got != tc.starts-1 {
				t.Errorf("%d new starts logged, want %d:\n%s", got, tc.starts-1, logs)
			}
			if tc.errType == "" {
				if err != nil {
					t.Fatalf("Prepare: %v\n%s", err, logs)
				}
				if _, err := h.Execute(ctx, call("p", "echo", 1), nil); err != nil {
					t.Fatalf("the call after a second start: %v", err)
				}
				return
			}
			ae := activityError(t, err)
			if ae.Type != tc.errType || ae.Category != history.CategoryPluginStart || !strings.Contains(ae.Message, tc.errText) {
				t.Fatalf("Prepare: %+v, want %s in category %s saying %q", ae, tc.errType, history.CategoryPluginStart, tc.errText)
			}
		})
	}
}
