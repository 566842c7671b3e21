package plugins

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/sdk/go/fastlane"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/testkit/needs"
)

// examplesDir is examples/plugins, relative to this package.
const examplesDir = "../examples/plugins"

// pythonCommand finds a python3 that has Debian's grpcio and protobuf; without one it returns
// nil and what to install.
func pythonCommand() (cmd []string, install string) {
	candidates := []string{os.Getenv("WEND_TEST_PYTHON"), "python3", "/usr/bin/python3"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import grpc, google.protobuf").Run() == nil {
			abs, _ := filepath.Abs(filepath.Join(examplesDir, "python", "plugin.py"))
			return []string{path, abs}, ""
		}
	}
	return nil, "apt-get install python3-grpcio python3-protobuf (or set WEND_TEST_PYTHON)"
}

// nodeCommand finds node and the npm dependencies of the example and of the SDK it imports;
// without them it returns nil and what to install.
func nodeCommand() (cmd []string, install string) {
	path, err := exec.LookPath("node")
	if err != nil {
		return nil, "apt-get install nodejs npm, then (cd examples/plugins/node && npm ci) and (cd sdk/node && npm ci)"
	}
	for _, d := range []string{"examples/plugins/node", "sdk/node"} {
		if _, err := os.Stat(filepath.Join("..", d, "node_modules", "@grpc", "grpc-js")); err != nil {
			return nil, "(cd " + d + " && npm ci)"
		}
	}
	dir, _ := filepath.Abs(filepath.Join(examplesDir, "node"))
	return []string{path, filepath.Join(dir, "plugin.js")}, ""
}

// rubyCommand finds a ruby that has Debian's grpc and google-protobuf gems; without one it
// returns nil and what to install.
func rubyCommand() (cmd []string, install string) {
	path, err := exec.LookPath("ruby")
	if err == nil && exec.Command(path, "-e", "require 'grpc'; require 'google/protobuf'").Run() == nil {
		abs, _ := filepath.Abs(filepath.Join(examplesDir, "ruby", "plugin.rb"))
		return []string{path, abs}, ""
	}
	return nil, "apt-get install ruby ruby-grpc ruby-google-protobuf"
}

// The Go example runs twice: "go" on its fast lane, "go-grpc" told not to offer one, so that
// every test over these holds on both transports. A language whose runtime is missing becomes
// a subtest of its name that skips saying what to install (fails under WEND_TEST_ALL=1), so
// the Go examples still run with only Go installed.
func exampleConfigs(t testing.TB) []Config {
	t.Helper()
	cfgs := []Config{
		{Name: "go", Command: []string{bins.goExample}},
		{Name: "go-grpc", Command: []string{bins.goExample}, Env: []string{fastlane.EnvVar + "=0"}},
	}
	for _, l := range []struct {
		name string
		find func() ([]string, string)
	}{{"python", pythonCommand}, {"node", nodeCommand}, {"ruby", rubyCommand}} {
		cmd, install := l.find()
		if cmd == nil {
			missingLanguage(t, l.name, install)
			continue
		}
		cfgs = append(cfgs, Config{Name: l.name, Command: cmd})
	}
	return cfgs
}

// missingLanguage reports an example plugin whose runtime is missing as a subtest named after
// it.
func missingLanguage(t testing.TB, name, install string) {
	what := "the " + name + " example plugin's runtime is missing"
	switch t := t.(type) {
	case *testing.T:
		t.Run(name, func(t *testing.T) { needs.Missing(t, what, install) })
	case *testing.B:
		t.Run(name, func(b *testing.B) { needs.Missing(b, what, install) })
	default:
		needs.Missing(t, what, install)
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(g, w)
}

// TestConformance runs the shared activity set against every example plugin.
func TestConformance(t *testing.T) {
	for _, cfg := range exampleConfigs(t) {
		t.Run(cfg.Name, func(t *testing.T) {
			t.Parallel()
			conformance(t, cfg)
		})
	}
}

func conformance(t *testing.T, cfg Config) {
	const grace = 3 * time.Second
	h, logs := newHost(t, Options{StopGrace: grace}, cfg)
	ctx := context.Background()
	name := cfg.Name
	defer func() {
		if t.Failed() {
			t.Logf("plugin log:\n%s", logs)
		}
	}()

	d, err := h.Describe(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range d.Activities {
		names = append(names, a.Name)
	}
	if want := []string{"echo", "fail", "greet", "record", "resume", "sleep"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("activities %v, want %v", names, want)
	}
	if greet, _ := d.Find("greet"); !strings.Contains(string(greet.InputSchema), `"name"`) || greet.Description == "" {
		t.Errorf("greet described as %+v", greet)
	}

	t.Run("greet", func(t *testing.T) {
		out, err := h.Execute(ctx, call(name, "greet", map[string]string{"name": "ada"}), nil)
		if err != nil || !jsonEqual(t, out, `{"greeting":"hello, ada"}`) {
			t.Fatalf("greet = %s, %v", out, err)
		}
	})
	t.Run("echo", func(t *testing.T) {
		in := `{"a":[1,2.5,{"b":null}],"s":"naïve \"quoted\"","t":true}`
		c := call(name, "echo", nil)
		c.Input = json.RawMessage(in)
		out, err := h.Execute(ctx, c, nil)
		if err != nil || !jsonEqual(t, out, in) {
			t.Fatalf("echo = %s, %v", out, err)
		}
	})
	t.Run("sleep heartbeats", func(t *testing.T) {
		var beats []history.Heartbeat
		out, err := h.Execute(ctx, call(name, "sleep", map[string]int{"ms": 350}), func(hb history.Heartbeat) { beats = append(beats, hb) })
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			SleptMS *int `json:"slept_ms"`
		}
		if json.Unmarshal(out, &got) != nil || got.SleptMS == nil || *got.SleptMS < 340 {
			t.Fatalf("sleep = %s", out)
		}
		if len(beats) < 1 || !strings.Contains(string(beats[len(beats)-1].Progress), "slept_ms") {
			t.Fatalf("heartbeats %v, want some with slept_ms progress", beats)
		}
	})
	t.Run("sleep cancelled", func(t *testing.T) {
		pid := pidOf(t, h, name)
		cctx, cancel := context.WithCancelCause(ctx)
		time.AfterFunc(200*time.Millisecond, func() { cancel(errors.New("stop")) })
		start := time.Now()
		_, err := h.Execute(cctx, call(name, "sleep", map[string]int{"ms": 10000}), nil)
		ae := activityError(t, err)
		if ae.Category != history.CategoryCancelled || strings.Contains(ae.Message, "killed") || time.Since(start) > slack(500*time.Millisecond) {
			t.Fatalf("after %s: %v", time.Since(start), ae)
		}
		if pidOf(t, h, name) != pid {
			t.Fatal("plugin was restarted: it did not stop on cancel")
		}
	})
	t.Run("sleep deadline", func(t *testing.T) {
		c := call(name, "sleep", map[string]int{"ms": 10000})
		c.Deadline = time.Now().Add(300 * time.Millisecond)
		_, err := h.Execute(ctx, c, nil)
		ae := activityError(t, err)
		if ae.Category != history.CategoryTimeout || ae.Type != TypeTimeout || strings.Contains(ae.Message, "killed") {
			t.Fatalf("got %v", ae)
		}
	})
	t.Run("fail", func(t *testing.T) {
		for _, nr := range []bool{false, true} {
			_, err := h.Execute(ctx, call(name, "fail", map[string]any{"type": "CardDeclined", "message": "no funds", "non_retryable": nr}), nil)
			ae := activityError(t, err)
			if ae.Type != "CardDeclined" || ae.Message != "no funds" || ae.NonRetryable != nr || ae.Category != history.CategoryActivity {
				t.Fatalf("got %+v", *ae)
			}
		}
	})
	// record's second try gets a trace context and writes back what the SDK exposes of it.
	const recordTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	t.Run("record", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "calls.jsonl")
		for attempt := 1; attempt <= 2; attempt++ {
			c := call(name, "record", map[string]any{"path": path, "note": map[string]int{"n": attempt}})
			c.Attempt, c.ActivityAttemptID = attempt, "attempt-"+string(rune('0'+attempt))
			if attempt == 2 {
				c.TraceParent = recordTraceParent
			}
			if _, err := h.Execute(ctx, c, nil); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		pid := pidOf(t, h, name)
		sc := bufio.NewScanner(f)
		n := 0
		for sc.Scan() {
			n++
			var line struct {
				ActivityExecutionID string          `json:"activity_execution_id"`
				ActivityAttemptID   string          `json:"activity_attempt_id"`
				Attempt             int             `json:"attempt"`
				Note                json.RawMessage `json:"note"`
				PID                 int             `json:"pid"`
				TraceParent         string          `json:"traceparent"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("line %d %q: %v", n, sc.Text(), err)
			}
			if line.ActivityExecutionID != "exec-1" || line.Attempt != n || line.ActivityAttemptID != "attempt-"+string(rune('0'+n)) ||
				line.PID != pid || !jsonEqual(t, line.Note, `{"n":`+string(rune('0'+n))+`}`) ||
				(n == 2) != (line.TraceParent == recordTraceParent) {
				t.Fatalf("line %d = %s (plugin pid %d)", n, sc.Text(), pid)
			}
		}
		if n != 2 {
			t.Fatalf("%d lines, want 2", n)
		}
	})
	t.Run("unknown activity", func(t *testing.T) {
		_, err := h.Execute(ctx, call(name, "nope", nil), nil)
		ae := activityError(t, err)
		if ae.Type != TypeUnknownActivity || !ae.NonRetryable || !strings.Contains(ae.Message, `unknown activity "nope"`) && !strings.Contains(ae.Message, `unknown activity 'nope'`) {
			t.Fatalf("got %v", ae)
		}
	})
	t.Run("foreign client rejected", func(t *testing.T) {
		// AutoMTLS: a process that dials the plugin without the host's certificate gets nothing
		// (docs/reliability.md P13).
		h.mu.Lock()
		p := h.slots[name].proc
		h.mu.Unlock()
		addr := p.client.ReattachConfig().Addr
		for _, creds := range []credentials.TransportCredentials{
			insecure.NewCredentials(),
			credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}),
		} {
			conn, err := grpc.NewClient("passthrough:///"+addr.String(), grpc.WithTransportCredentials(creds),
				grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, addr.Network(), addr.String())
				}))
			if err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err = pluginv1.NewActivitiesClient(conn).Describe(cctx, &pluginv1.DescribeRequest{})
			cancel()
			conn.Close()
			if err == nil {
				t.Fatalf("a client without the host's certificate called Describe on %s", addr)
			}
		}
	})
	t.Run("close", func(t *testing.T) {
		pid := pidOf(t, h, name)
		start := time.Now()
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		// Under StopGrace: the plugin exited on GRPCController.Shutdown, it was not killed.
		if d := time.Since(start); d >= grace {
			t.Errorf("close took %s: the plugin ignored Shutdown", d)
		}
		waitGroupGone(t, pid, slack(time.Second))
	})
}

// TestResumesFromLastProgress: in every example plugin, an activity's second try sees the
// progress its first try last reported before failing retryably (Go ctx.LastProgress, Python
// ctx.last_progress, Node ctx.lastProgress). The test stands in for the engine, which hands a
// retry the last recorded heartbeat progress.
func TestResumesFromLastProgress(t *testing.T) {
	for _, cfg := range exampleConfigs(t) {
		t.Run(cfg.Name, func(t *testing.T) {
			t.Parallel()
			resumes(t, cfg)
		})
	}
}

func resumes(t *testing.T, cfg Config) {
	h, logs := newHost(t, Options{}, cfg)
	defer func() {
		if t.Failed() {
			t.Logf("plugin log:\n%s", logs)
		}
	}()
	ctx := context.Background()
	in := map[string]int{"pages": 5, "fail_at": 4}

	var last json.RawMessage
	first := call(cfg.Name, "resume", in)
	_, err := h.Execute(ctx, first, func(hb history.Heartbeat) { last = hb.Progress })
	if ae := activityError(t, err); ae.Type != "Interrupted" || ae.NonRetryable || ae.Category != history.CategoryActivity {
		t.Fatalf("first try: %+v", *ae)
	}
	if !jsonEqual(t, last, `{"page":3}`) {
		t.Fatalf("first try last reported %s, want page 3", last)
	}

	second := call(cfg.Name, "resume", in)
	second.Attempt, second.ActivityAttemptID, second.LastProgress = 2, "attempt-2", last
	var beats []json.RawMessage
	out, err := h.Execute(ctx, second, func(hb history.Heartbeat) { beats = append(beats, hb.Progress) })
	if err != nil || !jsonEqual(t, out, `{"resumed_from":3,"pages":5}`) {
		t.Fatalf("second try = %s, %v", out, err)
	}
	if len(beats) != 2 || !jsonEqual(t, beats[0], `{"page":4}`) || !jsonEqual(t, beats[1], `{"page":5}`) {
		t.Fatalf("second try heartbeats %s, want pages 4 and 5", beats)
	}
}
