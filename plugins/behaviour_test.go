package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wendflow/wend/history"
)

// TestEnvAllowList: the plugin sees PATH, HOME, LANG, TZ, what Config.Env names and
// go-plugin's own variables; never the host's secrets
// (docs/reliability.md P12).
func TestEnvAllowList(t *testing.T) {
	t.Setenv("WEND_TEST_SECRET", "hunter2")
	t.Setenv("WEND_TEST_PASSED", "yes")
	t.Setenv("LANG", "C.UTF-8")
	cfg := testPlugin("t", "")
	cfg.Env = append(cfg.Env, "WEND_TEST_PASSED", "WEND_TEST_SET=1", "WEND_TEST_UNSET")
	h, _ := newHost(t, Options{}, cfg)
	out, err := h.Execute(context.Background(), call("t", "env", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatal(err)
	}
	allowed := []string{"PATH", "HOME", "LANG", "TZ", "WEND_TESTPLUGIN_MODE", "WEND_TEST_PASSED", "WEND_TEST_SET",
		"WEND_PLUGIN", "PLUGIN_MIN_PORT", "PLUGIN_MAX_PORT", "PLUGIN_PROTOCOL_VERSIONS", "PLUGIN_CLIENT_CERT", "PLUGIN_UNIX_SOCKET_DIR", "WEND_HOST_PID", "WEND_PLUGIN_GROUP"}
	var leaked []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(allowed, k) {
			leaked = append(leaked, k)
		}
	}
	if len(leaked) > 0 {
		t.Errorf("plugin saw %v beyond the allow-list", leaked)
	}
	for _, want := range []string{"WEND_TEST_PASSED=yes", "WEND_TEST_SET=1", "LANG=C.UTF-8", "WEND_PLUGIN=wend-activities-v1"} {
		if !slices.Contains(env, want) {
			t.Errorf("plugin env lacks %s: %v", want, env)
		}
	}
}

// TestOutputTagged: each line a plugin writes to stderr, or to its stdout after the handshake
// (where go-plugin reads and drops it), reaches Options.Log with the plugin's name.
func TestOutputTagged(t *testing.T) {
	for _, activity := range []string{"stderr", "rawstdout"} {
		t.Run(activity, func(t *testing.T) {
			h, logs := newHost(t, Options{}, testPlugin("tagged", ""))
			if _, err := h.Execute(context.Background(), call("tagged", activity, map[string]string{"line": "disk is 93% full"}), nil); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(logs.String(), "tagged: disk is 93% full") {
				if time.Now().After(deadline) {
					t.Fatalf("log lacks the tagged line:\n%s", logs)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestPluginErrorsPassThrough: a plugin's typed error reaches the caller unchanged.
func TestPluginErrorsPassThrough(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	for _, nr := range []bool{false, true} {
		_, err := h.Execute(context.Background(), call("demo", "fail", map[string]any{
			"type": "CardDeclined", "message": "insufficient funds", "non_retryable": nr}), nil)
		ae := activityError(t, err)
		want := history.ActivityError{Type: "CardDeclined", Message: "insufficient funds", NonRetryable: nr, Category: history.CategoryActivity}
		if ae.Type != want.Type || ae.Message != want.Message || ae.NonRetryable != nr || ae.Category != want.Category {
			t.Errorf("got %+v, want %+v", *ae, want)
		}
	}
}

func TestUnknownPlugin(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	_, err := h.Execute(context.Background(), call("nope", "greet", nil), nil)
	ae := activityError(t, err)
	if ae.Type != TypeUnknownPlugin || !ae.NonRetryable || ae.Message != `unknown plugin "nope" (declared: demo)` {
		t.Fatalf("got %v", ae)
	}
}

// TestCancelStopsTry: a cancelled context reaches the plugin, which stops; the process is kept.
func TestCancelStopsTry(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(errors.New("run cancelled by operator")) })
	start := time.Now()
	_, err := h.Execute(ctx, call("demo", "sleep", map[string]int{"ms": 10000}), nil)
	ae := activityError(t, err)
	if ae.Type != TypeCancelled || ae.Category != history.CategoryCancelled ||
		!strings.Contains(ae.Message, "plugin demo: activity sleep: cancelled after ") ||
		!strings.Contains(ae.Message, "run cancelled by operator") || strings.Contains(ae.Message, "killed") {
		t.Fatalf("got %v", ae)
	}
	if d := time.Since(start); d > slack(500*time.Millisecond) {
		t.Fatalf("cancel took %s", d)
	}
	pid := pidOf(t, h, "demo")
	if _, err := h.Execute(context.Background(), call("demo", "greet", map[string]string{"name": "x"}), nil); err != nil {
		t.Fatal(err)
	}
	if pidOf(t, h, "demo") != pid {
		t.Fatal("a well-behaved plugin was restarted after a cancel")
	}
}

// TestLostMapping: how gRPC failures of a live plugin map to typed errors
// (docs/reliability.md P14).
func TestLostMapping(t *testing.T) {
	crashWait = 10 * time.Millisecond
	t.Cleanup(func() { crashWait = time.Second })
	tests := []struct {
		code         codes.Code
		typ          string
		nonRetryable bool
	}{
		{codes.Unavailable, TypeCrashed, false},
		{codes.Canceled, TypeCrashed, false},
		{codes.ResourceExhausted, TypePayloadTooLarge, true},
		{codes.Unimplemented, TypeProtocol, true},
		{codes.Internal, TypeProtocol, false},
		{codes.Unknown, TypeProtocol, false},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			p := &process{name: "p", runner: newRunner("p", nil), stderr: &stderrLog{log: func(string, string) {}}}
			err := p.lost(history.ActivityCall{Activity: "a"}, status.Error(tt.code, "boom"))
			ae := activityError(t, err)
			if ae.Type != tt.typ || ae.NonRetryable != tt.nonRetryable || ae.Category != history.CategoryActivity ||
				!strings.HasPrefix(ae.Message, "plugin p: activity a: ") || !strings.Contains(ae.Message, "boom") {
				t.Fatalf("got %+v", *ae)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		configs []Config
		want    error
		msg     string
	}{
		{"no name", []Config{{Command: []string{"x"}}}, ErrNoName, "new plugin host: plugin has no name"},
		{"no command", []Config{{Name: "a"}}, ErrNoCommand, "new plugin host: plugin a: plugin has no command"},
		{"duplicate", []Config{{Name: "a", Command: []string{"x"}}, {Name: "a", Command: []string{"y"}}}, ErrDuplicate, "new plugin host: plugin a: plugin declared twice"},
		{"bad sha256", []Config{{Name: "a", Command: []string{"x"}, SHA256: "abc"}}, ErrBadChecksum, `new plugin host: plugin a: sha256 must be 64 hex digits, got "abc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.configs, Options{})
			if !errors.Is(err, tt.want) || err.Error() != tt.msg {
				t.Fatalf("got %v, want %q", err, tt.msg)
			}
		})
	}
}

// TestOverBeforeCall: a try that is already cancelled or past its deadline fails at once,
// without starting the plugin.
func TestOverBeforeCall(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{"./not-started"}})
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("run cancelled"))
	_, err := h.Execute(ctx, call("demo", "greet", nil), nil)
	if ae := activityError(t, err); ae.Category != history.CategoryCancelled ||
		ae.Message != "plugin demo: activity greet: cancelled before the call: run cancelled" {
		t.Fatalf("got %v", ae)
	}
	c := call("demo", "greet", nil)
	c.Deadline = time.Now().Add(-time.Second)
	_, err = h.Execute(context.Background(), c, nil)
	if ae := activityError(t, err); ae.Category != history.CategoryTimeout || ae.Type != TypeTimeout {
		t.Fatalf("got %v", ae)
	}
}

// TestTryIdentityAndProgressReachThePlugin: the host hands the plugin the try's ids, attempt
// the previous try's last heartbeat progress and its trace context.
func TestTryIdentityAndProgressReachThePlugin(t *testing.T) {
	h, _ := newHost(t, Options{}, testPlugin("t", ""))
	c := call("t", "info", nil)
	c.ActivityExecutionID, c.ActivityAttemptID, c.Attempt = "run:steps[0]", "run:steps[0]#2", 2
	c.LastProgress = json.RawMessage(`{"page":7}`)
	c.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	out, err := h.Execute(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		ActivityExecutionID, ActivityAttemptID string
		Attempt                                int
		LastProgress                           json.RawMessage
		TraceParent                            string
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	if info.ActivityExecutionID != "run:steps[0]" || info.ActivityAttemptID != "run:steps[0]#2" || info.Attempt != 2 || string(info.LastProgress) != `{"page":7}` ||
		info.TraceParent != c.TraceParent {
		t.Fatalf("plugin saw %+v", info)
	}
}
