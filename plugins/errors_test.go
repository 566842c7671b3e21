//go:build unix

package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/sdk/go/fastlane"
	"github.com/wendflow/wend/testkit/proctest"
)

var pidLine = regexp.MustCompile(`testplugin pid (\d+)`)

// loggedPID returns the pid the test plugin logged at start, or 0.
func loggedPID(logs *logLines) int {
	m := pidLine.FindAllStringSubmatch(logs.String(), -1)
	if len(m) == 0 {
		return 0
	}
	pid, _ := strconv.Atoi(m[len(m)-1][1])
	return pid
}

// TestStartErrors covers docs/reliability.md P1-P4: each bad start is a typed error that says whether a retry
// helps, carries the plugin's stderr, comes within its bound and leaves no process behind.
func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	badExec := filepath.Join(dir, "badexec")
	if err := os.WriteFile(badExec, []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "notexec")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A python3 without grpcio, as a pyenv or virtualenv one first on PATH is.
	pyDir := filepath.Join(dir, "venv", "bin")
	if err := os.MkdirAll(pyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	noGRPC := filepath.Join(pyDir, "python3")
	if err := os.WriteFile(noGRPC, []byte("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'grpc'\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		cfg          Config
		typ          string
		nonRetryable bool
		within       time.Duration
		contains     []string
	}{
		{"missing binary", Config{Command: []string{"./nope"}, Dir: dir}, TypePluginNotFound, true, time.Second,
			[]string{"start plugin t: " + filepath.Join(dir, "nope") + " does not exist"}},
		{"not executable", Config{Command: []string{notExec}}, TypePluginNotFound, true, time.Second,
			[]string{notExec + " is not executable"}},
		{"not a program", Config{Command: []string{badExec}}, TypeStartFailed, true, time.Second,
			[]string{"start plugin t: fork/exec " + badExec + ": exec format error"}},
		{"not in PATH", Config{Command: []string{"wend-no-such-plugin"}}, TypePluginNotFound, true, time.Second,
			[]string{`"wend-no-such-plugin" not found in PATH`}},
		{"exit before handshake", testPlugin("t", "exit"), TypeExited, true, 2 * time.Second,
			[]string{"exited before the handshake (exit status 3)", "stderr: ", "testplugin: config file missing"}},
		{"python without grpcio", Config{Command: []string{noGRPC, "plugin.py"}, Dir: dir}, TypeExited, true, 2 * time.Second,
			[]string{"exited before the handshake (exit status 1)", "No module named 'grpc'", "the interpreter was " + noGRPC,
				"plugins: {t: {command: [/usr/bin/python3, SCRIPT]}}"}},
		{"no handshake", testPlugin("t", "nohandshake"), TypeStartTimeout, false, 2500 * time.Millisecond,
			[]string{"no handshake within 1s; killed it (a slow start on a busy machine: start_timeout: 2m in the plugin's declaration allows more)", "testplugin: thinking about it"}},
		{"garbage on stdout", testPlugin("t", "garbage"), TypeBadHandshake, true, time.Second,
			[]string{`expected the go-plugin handshake on stdout, got "hello from a chatty plugin"`, "testplugin pid"}},
		{"wrong cookie", testPlugin("t", "wrongcookie"), TypeExited, true, 2 * time.Second,
			[]string{"exited before the handshake (exit status 1)", "This binary is a plugin"}},
		{"wrong protocol", testPlugin("t", "wrongproto"), TypeBadHandshake, true, 2 * time.Second,
			[]string{"bad handshake: incompatible API version with plugin. Plugin version: 2", "testplugin pid"}},
		{"checksum mismatch", Config{Command: []string{bins.testPlugin}, SHA256: strings.Repeat("ab", 32)}, TypeChecksumMismatch, true, 2 * time.Second,
			[]string{"sha256 of " + bins.testPlugin + " is ", "want " + strings.Repeat("ab", 32)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Name = "t"
			h, logs := newHost(t, Options{StartTimeout: time.Second}, tt.cfg)
			start := time.Now()
			_, err := h.Execute(context.Background(), call("t", "noop", nil), nil)
			elapsed := time.Since(start)
			ae := activityError(t, err)
			if ae.Type != tt.typ || ae.NonRetryable != tt.nonRetryable || ae.Category != history.CategoryPluginStart {
				t.Errorf("got type %q non_retryable=%v category %q, want %q %v plugin_start; %v", ae.Type, ae.NonRetryable, ae.Category, tt.typ, tt.nonRetryable, ae)
			}
			for _, want := range tt.contains {
				if !strings.Contains(ae.Message, want) {
					t.Errorf("message %q lacks %q", ae.Message, want)
				}
			}
			if elapsed > slack(tt.within) {
				t.Errorf("error after %s, want within %s", elapsed, slack(tt.within))
			}
			orphans := 0
			if pid := loggedPID(logs); pid != 0 {
				waitGroupGone(t, pid, slack(100*time.Millisecond))
				orphans = len(proctest.Group(pid))
			} else if strings.Contains(tt.name, "handshake") || strings.Contains(tt.name, "wrong") {
				t.Errorf("test plugin did not log its pid; logs:\n%s", logs)
			}
			t.Logf("RELIABILITY suite=plugins test=start case=%q type=%s non_retryable=%v start_error_ms=%d orphans=%d",
				tt.name, ae.Type, ae.NonRetryable, elapsed.Milliseconds(), orphans)
			t.Logf("%v", ae)
		})
	}
}

// TestChecksumSwap pins a binary, then replaces it on disk: the host runs its verified private
// copy, and never the swapped file: the next try notices the change and refuses it with the
// checksum mismatch, whether the old process lives or died; with the pinned bytes back in
// place the plugin serves again (docs/reliability.md P4).
func TestChecksumSwap(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plug")
	b, err := os.ReadFile(bins.goExample)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	h, _ := newHost(t, Options{}, Config{Name: "p", Command: []string{"./plug"}, Dir: dir, SHA256: hex.EncodeToString(sum[:])})
	if _, err := h.Execute(context.Background(), call("p", "greet", map[string]string{"name": "x"}), nil); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, h, "p")
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	if exe == path || filepath.Dir(exe) == dir {
		t.Fatalf("plugin runs %s, want a private copy", exe)
	}
	st, err := os.Stat(filepath.Dir(exe))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir %s: mode %v, err %v; want 0700", filepath.Dir(exe), st.Mode().Perm(), err)
	}

	swapped, err := os.ReadFile(bins.testPlugin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, swapped, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kill := range []bool{false, true} {
		if kill {
			killPlugin(t, h, "p")
		}
		_, err := h.Execute(context.Background(), call("p", "greet", map[string]string{"name": "y"}), nil)
		if ae := activityError(t, err); ae.Type != TypeChecksumMismatch || !ae.NonRetryable || !strings.Contains(ae.Message, "want "+hex.EncodeToString(sum[:])) {
			t.Fatalf("after the swap (old process killed: %v): %v, want a non-retryable %s", kill, ae, TypeChecksumMismatch)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := h.Execute(context.Background(), call("p", "greet", map[string]string{"name": "z"}), nil)
	if err != nil || string(out) != `{"greeting":"hello, z"}` {
		t.Fatalf("with the pinned binary back: %s, %v", out, err)
	}
}

// killPlugin SIGKILLs plugin's process and waits until the host has noticed.
func killPlugin(t *testing.T, h *Host, plugin string) {
	t.Helper()
	pid := pidOf(t, h, plugin)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	p := h.slots[plugin].proc
	h.mu.Unlock()
	select {
	case <-p.runner.done:
	case <-time.After(3 * time.Second):
		t.Fatal("host did not notice the kill")
	}
	waitGroupGone(t, pid, time.Second)
}

type callErrorCase struct {
	name         string
	activity     string
	input        any
	deadline     time.Duration
	typ          string
	category     string
	nonRetryable bool
	within       time.Duration
	contains     []string
	restarts     bool // a new process serves the next call
}

// TestCallErrors covers docs/reliability.md P5, P6, P7, L3 and the error mapping of a try.
func TestCallErrors(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	tests := []callErrorCase{
		{"crash mid-call", "crash", nil, 0, TypeCrashed, history.CategoryActivity, false, time.Second,
			[]string{"plugin t: activity crash: the plugin exited during the call (signal: killed)", "testplugin: about to crash"}, true},
		{"hang past deadline", "hang", nil, 300 * time.Millisecond, TypeTimeout, history.CategoryTimeout, false, 2 * time.Second,
			[]string{"plugin t: activity hang: timed out after 3", "did not stop within 500ms, so its process group was killed"}, true},
		{"frozen plugin", "freeze", nil, 300 * time.Millisecond, TypeTimeout, history.CategoryTimeout, false, 2 * time.Second,
			[]string{"activity freeze: timed out", "process group was killed"}, true},
		{"deadline honoured", "sleep", map[string]int{"ms": 10000}, 300 * time.Millisecond, TypeTimeout, history.CategoryTimeout, false, time.Second,
			[]string{"activity sleep: timed out"}, false},
		{"unknown activity", "nope", nil, 0, TypeUnknownActivity, history.CategoryActivity, true, time.Second,
			[]string{`unknown activity "nope" (have ["big",`}, false},
		{"input too large", "echo", big, 0, TypePayloadTooLarge, history.CategoryActivity, true, time.Second,
			[]string{"plugin t: activity echo: input is 3145730 bytes, over the 2097152-byte limit"}, false},
		{"output too large", "big", map[string]int{"bytes": 3 << 20}, 0, TypePayloadTooLarge, history.CategoryActivity, true, 2 * time.Second,
			[]string{"output of big is 3145730 bytes, over the 2097152-byte limit"}, false},
		{"output over grpc's 4 MB", "big", map[string]int{"bytes": 5 << 20}, 0, TypePayloadTooLarge, history.CategoryActivity, true, 2 * time.Second,
			[]string{"output of big is 5242882 bytes, over the 2097152-byte limit"}, false},
		{"bad input", "sleep", "not an object", 0, "BadInput", history.CategoryActivity, true, time.Second,
			[]string{"decode input of sleep"}, false},
	}
	// Every case on the plugin's fast lane and on gRPC lanes: a try fails, and is retried, the
	// same way on either.
	transports := []struct {
		name string
		env  []string
	}{{"fast", nil}, {"grpc", []string{fastlane.EnvVar + "=0"}}}
	for _, tr := range transports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) { checkCallError(t, tt, tr.env, tr.name == "fast") })
		}
	}
}

func checkCallError(t *testing.T, tt callErrorCase, env []string, fast bool) {
	cfg := testPlugin("t", "")
	cfg.Env = append(cfg.Env, env...)
	h, logs := newHost(t, Options{StopGrace: 500 * time.Millisecond}, cfg)
	if _, err := h.Execute(context.Background(), call("t", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	if got := usesFastLane(t, h, "t"); got != fast {
		t.Fatalf("fast lane %v, want %v", got, fast)
	}
	pid := pidOf(t, h, "t")
	c := call("t", tt.activity, tt.input)
	if tt.deadline > 0 {
		c.Deadline = time.Now().Add(tt.deadline)
	}
	start := time.Now()
	_, err := h.Execute(context.Background(), c, nil)
	elapsed := time.Since(start)
	ae := activityError(t, err)
	if ae.Type != tt.typ || ae.Category != tt.category || ae.NonRetryable != tt.nonRetryable {
		t.Errorf("got type %q category %q non_retryable=%v, want %q %q %v; %v", ae.Type, ae.Category, ae.NonRetryable, tt.typ, tt.category, tt.nonRetryable, ae)
	}
	for _, want := range tt.contains {
		if !strings.Contains(ae.Message, want) {
			t.Errorf("message %q lacks %q", ae.Message, want)
		}
	}
	if elapsed > tt.deadline+slack(tt.within) {
		t.Errorf("error after %s, want within %s", elapsed, tt.deadline+slack(tt.within))
	}
	if tt.restarts {
		waitGroupGone(t, pid, slack(time.Second))
	}
	if _, err := h.Execute(context.Background(), call("t", "noop", nil), nil); err != nil {
		t.Fatalf("next call: %v; logs:\n%s", err, logs)
	}
	if next := pidOf(t, h, "t"); (next != pid) != tt.restarts {
		t.Errorf("pid %d -> %d, restart want %v", pid, next, tt.restarts)
	}
	t.Logf("RELIABILITY suite=plugins test=call case=%q type=%s category=%s non_retryable=%v error_ms=%d deadline_ms=%d restarted=%v",
		tt.name, ae.Type, ae.Category, ae.NonRetryable, elapsed.Milliseconds(), tt.deadline.Milliseconds(), tt.restarts)
	t.Logf("%v", ae)
	last := pidOf(t, h, "t")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, last, slack(time.Second))
}
