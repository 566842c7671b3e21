package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/wendflow/wend/sdk/go"
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
		// 5s, not less: the shell must have started its child and written its pid before the
		// timeout fires, also on a loaded machine, or there is no child whose death to check.
		{name: "timeout", timeout: "5s", errType: "Timeout"},
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

// TestRunEndsWhatItLeft: a command that exits leaving a background child has the child killed
// when its try ends, and a retried try of the same activity kills the command an earlier try
// of it still runs before its own starts.
func TestRunEndsWhatItLeft(t *testing.T) {
	t.Setenv("WEND_COMMAND_RECORDS", t.TempDir())
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `sleep 60 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"`
	if _, err := call(t, context.Background(), "exec", "run", map[string]any{"argv": []string{script, pidFile}, "shell": true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !running(readPid(t, pidFile)) })

	// An earlier try of activity "a1" still runs (its host lost track of it); the retry comes.
	os.Remove(pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan *sdk.Error, 1)
	go func() {
		_, err := act(t, ctx, "a1", map[string]any{"argv": []string{script + "; wait", pidFile}, "shell": true})
		first <- err
	}()
	waitFor(t, func() bool { _, err := os.Stat(pidFile); return err == nil })
	old := readPid(t, pidFile)
	out, err := act(t, context.Background(), "a1", map[string]any{"argv": []string{`cut -d' ' -f3 /proc/$1/stat 2>/dev/null || echo gone`, strconv.Itoa(old)}, "shell": true})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(out["stdout"].(string)); s != "gone" && s != "Z" {
		t.Errorf("the retried try ran beside the earlier try's command (state %q)", s)
	}
	if err := <-first; err == nil {
		t.Error("the earlier try succeeded although its command was killed")
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// act runs one try of exec.run as a try of the activity execution id.
func act(t *testing.T, ctx context.Context, id string, input any) (map[string]any, *sdk.Error) {
	t.Helper()
	raw, _ := json.Marshal(input)
	out, err := Activities("exec")["run"].Run(sdk.NewContext(ctx, sdk.Info{Activity: "run", ActivityExecutionID: id}, nil), raw)
	if err != nil {
		var se *sdk.Error
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, &sdk.Error{Type: "plain", Message: err.Error()}
	}
	b, _ := json.Marshal(out)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m, nil
}
