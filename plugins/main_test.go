package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/proctest"
)

// bins holds the plugins built once for the whole test binary.
var bins struct {
	dir        string
	goExample  string
	testPlugin string
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(hostHelper())
	}
	dir, err := os.MkdirTemp("", "wend-plugins-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bins.dir = dir
	bins.goExample = filepath.Join(dir, "goexample")
	bins.testPlugin = filepath.Join(dir, "testplugin")
	for out, pkg := range map[string]string{
		bins.goExample:  "../examples/plugins/demo",
		bins.testPlugin: "./internal/testplugin",
	} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", pkg, err)
			os.RemoveAll(dir)
			os.Exit(2)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// logLines collects the plugin stderr lines a Host logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) log(plugin, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, plugin+": "+line)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newHost returns a Host closed at the end of the test, with a short stop grace. Its start
// timeout is long: a Node or Ruby plugin on a loaded 2-core machine takes many seconds to
// answer its handshake, and the tests of a start that never answers set their own.
func newHost(t *testing.T, opts Options, configs ...Config) (*Host, *logLines) {
	t.Helper()
	logs := &logLines{}
	if opts.Log == nil {
		opts.Log = logs.log
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = time.Minute
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = time.Second
	}
	h, err := New(configs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h, logs
}

func testPlugin(name, mode string) Config {
	return Config{Name: name, Command: []string{bins.testPlugin}, Env: []string{"WEND_TESTPLUGIN_MODE=" + mode}}
}

func call(plugin, activity string, input any) history.ActivityCall {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return history.ActivityCall{
		Plugin: plugin, Activity: activity, Input: b,
		WorkflowID: "wf-1", RunID: "run-1", StepPath: "steps[0]",
		ActivityExecutionID: "exec-1", ActivityAttemptID: "attempt-1", Attempt: 1,
	}
}

// pidOf returns the current process id of plugin (its process group id too).
func pidOf(t *testing.T, h *Host, plugin string) int {
	t.Helper()
	h.mu.Lock()
	s := h.slots[plugin]
	h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		t.Fatalf("plugin %s has no process", plugin)
	}
	pid, err := s.proc.pid()
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGroupGone fails the test unless process group pgid is empty within d.
func waitGroupGone(t *testing.T, pgid int, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		left := proctest.Group(pgid)
		if len(left) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("process group %d still has %v after %s", pgid, left, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// activityError asserts err is a *history.ActivityError and returns it.
func activityError(t *testing.T, err error) *history.ActivityError {
	t.Helper()
	ae, ok := err.(*history.ActivityError)
	if !ok {
		t.Fatalf("error %T %v, want *history.ActivityError", err, err)
	}
	return ae
}

// slack scales the time bounds tests assert, for loaded CI machines: WEND_TEST_TIME_SCALE
// (default 3). The figures themselves are logged with -v.
func slack(d time.Duration) time.Duration {
	scale := 3.0
	if v, err := strconv.ParseFloat(os.Getenv("WEND_TEST_TIME_SCALE"), 64); err == nil && v > 0 {
		scale = v
	}
	return time.Duration(float64(d) * scale)
}

const helperEnv = "WEND_PLUGINS_TEST_HOST_HELPER"

// hostHelper is a host process for the host-kill test: it starts the plugin whose command is
// the JSON array in the helper variable, prints the plugin's pid, then calls sleep until it is
// killed.
func hostHelper() int {
	var command []string
	if err := json.Unmarshal([]byte(os.Getenv(helperEnv)), &command); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	h, err := New([]Config{{Name: "demo", Command: command}}, Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	go func() {
		for {
			time.Sleep(10 * time.Millisecond)
			h.mu.Lock()
			s := h.slots["demo"]
			h.mu.Unlock()
			s.mu.Lock()
			p := s.proc
			s.mu.Unlock()
			if p != nil {
				pid, _ := p.pid()
				fmt.Printf("pid %d\n", pid)
				return
			}
		}
	}()
	_, err = h.Execute(context.Background(), call("demo", "sleep", map[string]int{"ms": 60000}), nil)
	fmt.Println("error:", err)
	return 1
}
