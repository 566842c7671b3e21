package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunKillsChildren ends a try whose command left a child running, by its timeout and by a
// cancel, and checks the child is gone too.
func TestRunKillsChildren(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout string
		cancel  bool
		errType string
	}{
		{name: "timeout", timeout: "300ms", errType: "Timeout"},
		{name: "cancel", cancel: true, errType: "plain"}, // the SDK reports a cancelled context itself
	} {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() {
					waitFor(t, func() bool { _, err := os.Stat(pidFile); return err == nil })
					cancel()
				}()
			}
			in := map[string]any{"argv": []string{`sleep 60 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; wait`, pidFile}, "shell": true}
			if tt.timeout != "" {
				in["timeout"] = tt.timeout
			}
			start := time.Now()
			_, err := call(t, ctx, "exec", "run", in)
			if err == nil || err.Type != tt.errType {
				t.Fatalf("got %v, want a %s failure", err, tt.errType)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Fatalf("the try took %s: the command was not killed", d)
			}
			b, rerr := os.ReadFile(pidFile)
			if rerr != nil {
				t.Fatal(rerr)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			waitFor(t, func() bool { return !running(pid) })
		})
	}
}

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Error("condition not met within 20s")
}
