//go:build unix

package plugins

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wendflow/wend/sdk/go/fastlane"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/testkit/needs"
)

// Whether a plugin's lanes are fast lanes: only when the host asks, the plugin offers, and the
// offer works; otherwise gRPC lanes, with a note in the log only if an offer did not work.
func TestFastLaneNegotiation(t *testing.T) {
	offer := func(kind string) Config {
		cfg := testPlugin("p", "badfastlane")
		cfg.Env = append(cfg.Env, "WEND_TESTPLUGIN_OFFER="+kind)
		return cfg
	}
	python, pythonInstall := pythonCommand()
	for _, tc := range []struct {
		name    string
		cfg     Config
		hostEnv string // the host's WEND_PLUGIN_FASTLANE
		fast    bool
		note    string // in the log; "" for none about the fast lane
	}{
		{"go sdk", Config{Name: "p", Command: []string{bins.goExample}}, "", true, ""},
		{"plugin turned it off", Config{Name: "p", Command: []string{bins.goExample}, Env: []string{fastlane.EnvVar + "=0"}}, "", false, ""},
		{"host turned it off", Config{Name: "p", Command: []string{bins.goExample}}, "0", false, ""},
		{"python offers none", Config{Name: "p", Command: python}, "", false, ""},
		{"spoilt offer served", offer(""), "", true, ""},
		{"wrong token", offer("wrongtoken"), "", false, "token refused"},
		{"no socket", offer("nosocket"), "", false, "no such file or directory"},
		{"token not hex", offer("garbage"), "", false, "is not 32 bytes of hex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Command == nil {
				needs.Missing(t, "python3 with grpc and protobuf is missing", pythonInstall)
			}
			if tc.hostEnv != "" {
				t.Setenv(fastlane.EnvVar, tc.hostEnv)
			}
			h, logs := newHost(t, Options{}, tc.cfg)
			for range 3 {
				out, err := h.Execute(context.Background(), call("p", "echo", map[string]string{"name": "x"}), nil)
				if err != nil || !jsonEqual(t, out, `{"name":"x"}`) {
					t.Fatalf("echo = %s, %v; log: %s", out, err, logs)
				}
			}
			if on, idle := idleLanes(t, h, "p"); !on || idle != 1 {
				t.Fatalf("lanes on=%v idle=%d, want on and 1", on, idle)
			}
			if got := usesFastLane(t, h, "p"); got != tc.fast {
				t.Fatalf("fast lane %v, want %v; log: %s", got, tc.fast, logs)
			}
			log := logs.String()
			if tc.note == "" && strings.Contains(log, "fast lane") {
				t.Fatalf("logged: %s", log)
			}
			if tc.note != "" && (!strings.Contains(log, "offered a fast lane that did not work") || !strings.Contains(log, tc.note)) {
				t.Fatalf("log lacks the note %q: %s", tc.note, log)
			}
		})
	}
}

// The host refuses the plugin's frames over the limit, and frames that are not events, with
// the error class a gRPC lane gives for the same (ResourceExhausted, Internal); and it refuses
// to send a frame over the limit without writing a byte.
func TestFastLaneBadFrameFromPlugin(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	p, err := h.process("demo")
	if err != nil {
		t.Fatal(err)
	}
	var over [4]byte
	binary.BigEndian.PutUint32(over[:], fastlane.MaxFrame+1)
	for _, tc := range []struct {
		name  string
		frame []byte
		code  codes.Code
		typ   string
	}{
		{"oversized", over[:], codes.ResourceExhausted, TypePayloadTooLarge},
		{"not an event", []byte{0, 0, 0, 2, 0xff, 0xff}, codes.Internal, TypeProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, plugin := net.Pipe()
			defer host.Close()
			defer plugin.Close()
			fs := &fastStream{c: host, r: fastlane.NewReader(host, fastlane.MaxFrame), w: fastlane.NewWriter(host, fastlane.MaxFrame)}
			go plugin.Write(tc.frame)
			_, err := fs.Recv()
			if status.Code(err) != tc.code {
				t.Fatalf("Recv: %v, want %s", err, tc.code)
			}
			ae := activityError(t, p.lost(call("demo", "echo", nil), err))
			if ae.Type != tc.typ {
				t.Fatalf("the try's error: %v, want %s", ae, tc.typ)
			}
		})
	}

	host, plugin := net.Pipe() // a write would block: nobody reads the plugin's end
	defer host.Close()
	defer plugin.Close()
	fs := &fastStream{c: host, r: fastlane.NewReader(host, fastlane.MaxFrame), w: fastlane.NewWriter(host, fastlane.MaxFrame)}
	huge := &pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: &pluginv1.ExecuteRequest{Input: make([]byte, fastlane.MaxFrame)}}}
	if err := fs.Send(huge); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "over the size limit") {
		t.Fatalf("Send of an oversized request: %v", err)
	}
}

// A lane opened with the wrong token is refused at once, and the plugin serves the right one.
func TestFastLaneWrongToken(t *testing.T) {
	h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
	p, err := h.process("demo")
	if err != nil {
		t.Fatal(err)
	}
	o := *p.lanes.fast
	o.token = append([]byte(nil), o.token...)
	o.token[len(o.token)-1] ^= 0x80
	if _, err := dialFast(&o, 5*time.Second, true); err == nil || !strings.Contains(err.Error(), "token refused") {
		t.Fatalf("wrong token: %v, want refused", err)
	}
	fs, err := dialFast(p.lanes.fast, 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.c.Close()
	laneRequest(t, fs, "echo", `{"a":1}`)
	if ev, err := fs.Recv(); err != nil || !jsonEqual(t, ev.GetResult().GetOutput(), `{"a":1}`) {
		t.Fatalf("echo on the right token: %v, %v", ev, err)
	}
}

// Close closes the idle fast lanes, and the socket's directory goes with the plugin: removed
// by the SDK when the plugin exits, by the host when it had to kill it.
func TestFastLaneCleanup(t *testing.T) {
	for _, killed := range []bool{false, true} {
		t.Run(map[bool]string{false: "exit", true: "killed"}[killed], func(t *testing.T) {
			h, logs := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}})
			if _, err := h.Execute(context.Background(), call("demo", "echo", 1), nil); err != nil {
				t.Fatal(err)
			}
			p, err := h.process("demo")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(p.lanes.fast.addr)
			p.lanes.mu.Lock()
			idle := p.lanes.idle[0].stream.(*fastStream)
			p.lanes.mu.Unlock()
			if killed {
				p.runner.killGroup()
				<-p.runner.done
				if _, err := os.Stat(dir); err != nil {
					t.Fatalf("the killed plugin's socket dir: %v, want it left for the host", err)
				}
			} else {
				p.client.Kill() // go-plugin's shutdown, as stop begins: the plugin exits by itself
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("socket dir after the plugin exited: %v, want it removed by the plugin", err)
				}
			}
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := idle.c.Write([]byte{0}); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("the idle lane after Close: %v, want it closed", err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("socket dir after Close: %v, want it gone; log: %s", err, logs)
			}
		})
	}
}

// A try that needs a new lane to a frozen plugin still ends at its deadline, and the plugin is
// killed, on either transport: opening a fast lane waits for nothing the try's stop cannot end.
func TestNewLaneToFrozenPlugin(t *testing.T) {
	for _, tr := range []struct {
		name string
		env  []string
	}{{"fast", nil}, {"grpc", []string{fastlane.EnvVar + "=0"}}} {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			cfg := testPlugin("t", "")
			cfg.Env = append(cfg.Env, tr.env...)
			h, logs := newHost(t, Options{StopGrace: 300 * time.Millisecond}, cfg)
			if _, err := h.Execute(context.Background(), call("t", "noop", nil), nil); err != nil {
				t.Fatal(err)
			}
			p, err := h.process("t")
			if err != nil {
				t.Fatal(err)
			}
			for ts := p.lanes.take(); ts != nil; ts = p.lanes.take() {
				ts.cancel()
			}
			pid := pidOf(t, h, "t")
			if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			waitStopped(t, pid)
			c := call("t", "noop", nil)
			c.Deadline = time.Now().Add(300 * time.Millisecond)
			start := time.Now()
			_, err = h.Execute(context.Background(), c, nil)
			if ae := activityError(t, err); ae.Type != TypeTimeout || !strings.Contains(ae.Message, "process group was killed") {
				t.Fatalf("got %v; log: %s", ae, logs)
			}
			if d := time.Since(start); d > slack(time.Second) {
				t.Fatalf("the try ended after %s", d)
			}
			if strings.Contains(logs.String(), "fast lane") {
				t.Fatalf("logged: %s", logs)
			}
		})
	}
}

// waitStopped waits until every thread of pid is stopped: SIGSTOP takes effect asynchronously.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		stopped := len(tasks) > 0
		for _, task := range tasks {
			b, err := os.ReadFile(task)
			_, rest, _ := strings.Cut(string(b), ") ")
			if err == nil && !strings.HasPrefix(rest, "T") {
				stopped = false
			}
		}
		if stopped {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %d did not stop", pid)
		}
		time.Sleep(time.Millisecond)
	}
}
