//go:build linux

package plugins

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/proctest"
)

// TestCloseFrozenPlugin: go-plugin's Kill blocks for good on a SIGSTOPped plugin; Close must
// still return, killing the group (docs/reliability.md P7).
func TestCloseFrozenPlugin(t *testing.T) {
	h, _ := newHost(t, Options{StopGrace: 500 * time.Millisecond}, testPlugin("t", ""))
	if _, err := h.Execute(context.Background(), call("t", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, h, "t")
	go h.Execute(context.Background(), call("t", "freeze", nil), nil)
	deadline := time.Now().Add(3 * time.Second)
	for proctest.State(pid) != "T" {
		if time.Now().After(deadline) {
			t.Fatalf("plugin state %q, never stopped", proctest.State(pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > slack(time.Second) {
		t.Errorf("close took %s, want <= %s (grace 500ms)", d, slack(time.Second))
	}
	waitGroupGone(t, pid, time.Second)
	t.Logf("RELIABILITY suite=plugins test=P7 shutdown_ms=%d orphans=%d", time.Since(start).Milliseconds(), len(proctest.Group(pid)))
}

// TestCloseKillsGrandchildren: a plugin's child holding its pipes dies with it
// (docs/reliability.md P9).
func TestCloseKillsGrandchildren(t *testing.T) {
	h, _ := newHost(t, Options{}, testPlugin("t", ""))
	out, err := h.Execute(context.Background(), call("t", "grandchild", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(string(out))
	if err != nil || !proctest.Alive(child) {
		t.Fatalf("grandchild %s not running (%v)", out, err)
	}
	pid := pidOf(t, h, "t")
	start := time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, pid, 3*time.Second)
	if proctest.Alive(child) {
		t.Fatalf("grandchild %d survived", child)
	}
	t.Logf("RELIABILITY suite=plugins test=P9 grandchildren_alive=0 stop_ms=%d", time.Since(start).Milliseconds())
}

// TestCrashKillsGrandchildren: when the plugin dies on its own, what is left of its group is
// killed too, and the host notices at once despite the inherited pipes.
func TestCrashKillsGrandchildren(t *testing.T) {
	h, _ := newHost(t, Options{}, testPlugin("t", ""))
	out, err := h.Execute(context.Background(), call("t", "grandchild", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(out))
	pid := pidOf(t, h, "t")
	killPlugin(t, h, "t")
	if proctest.Alive(child) {
		t.Fatalf("grandchild %d survived its plugin %d", child, pid)
	}
	if _, err := h.Execute(context.Background(), call("t", "noop", nil), nil); err != nil {
		t.Fatalf("call after crash: %v", err)
	}
}

// TestHostKilled: SIGKILL the host during a call; the plugin must be gone within 3 s
// (docs/reliability.md P8), in every language: the parent-death signal does not depend on the
// plugin's cooperation.
func TestHostKilled(t *testing.T) {
	for _, cfg := range exampleConfigs(t) {
		t.Run(cfg.Name, func(t *testing.T) {
			t.Parallel()
			hostKilled(t, cfg.Name, cfg.Command)
		})
	}
}

func hostKilled(t *testing.T, lang string, command []string) {
	b, err := json.Marshal(command)
	if err != nil {
		t.Fatal(err)
	}
	cmd, pid := startHost(t, helperEnv+"="+string(b))
	time.Sleep(300 * time.Millisecond) // let the call get going
	if proctest.State(pid) == "" {
		t.Fatalf("plugin %d not running", pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	took := waitGroupGone(t, pid, 3*time.Second)
	t.Logf("RELIABILITY suite=plugins test=P8 lang=%s kills=1 orphans_after_3s=0 plugin_gone_ms=%d", lang, took.Milliseconds())
}

// TestSDKExitsWhenParentDies: without the host's parent-death signal (its parent here is a
// shell that exits soon), a Go SDK plugin notices it was reparented and exits within ~1 s.
func TestSDKExitsWhenParentDies(t *testing.T) {
	cmd := exec.Command("sh", "-c", `WEND_HOST_PID=$$ "$0" & echo $!; sleep 0.2`, bins.goExample)
	cmd.Env = []string{"WEND_PLUGIN=wend-activities-v1", "PLUGIN_PROTOCOL_VERSIONS=1", "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	r := bufio.NewReader(stdout)
	pid, err := strconv.Atoi(readLine(t, r, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !proctest.Alive(pid) {
		t.Fatalf("plugin %d not running while its parent is", pid)
	}
	_ = cmd.Wait() // the shell is gone; the plugin is an orphan now
	start := time.Now()
	for proctest.Alive(pid) {
		if time.Since(start) > slack(1500*time.Millisecond) {
			t.Fatalf("orphaned plugin %d still running after %s", pid, time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("orphaned plugin exited %s after its parent", time.Since(start).Round(time.Millisecond))
}
