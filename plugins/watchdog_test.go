//go:build unix && (!linux || wend_portable)

package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// watchdogHostEnv runs the test binary as a host for TestWatchdogEndsGroupWithHost (see
// watchdogHost).
const watchdogHostEnv = "WEND_WATCHDOG_TEST_HOST"

func init() {
	if v := os.Getenv(watchdogHostEnv); v != "" {
		os.Exit(watchdogHost(v))
	}
}

// watchdogHost starts the plugin command (a JSON array), has it fork a grandchild that holds
// its pipes, prints "child N" and "pid N", then sleeps in a call until killed.
func watchdogHost(arg string) int {
	var command []string
	if err := json.Unmarshal([]byte(arg), &command); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	h, err := New([]Config{{Name: "orphan", Command: command}}, Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	out, err := h.Execute(context.Background(), call("orphan", "grandchild", map[string]int{}), nil)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	h.mu.Lock()
	p := h.slots["orphan"].proc
	h.mu.Unlock()
	pid, _ := p.pid()
	fmt.Printf("pid %d\n", pid) // startHost reads this line; the child's pid follows
	fmt.Printf("%s\n", out)
	_, err = h.Execute(context.Background(), call("orphan", "sleep", map[string]int{"ms": 600000}), nil)
	fmt.Println("error:", err)
	return 1
}

// guardMembers is how many processes the guard adds to a plugin's process group: the watchdog.
//
//lint:ignore U1000 read by host_test.go, which needs /proc (Linux only)
const guardMembers = 1

// groupEmpty reports whether no process is left in process group pgid (kill -0 finds none).
// Zombies count: the group is empty once init has reaped the killed processes, which some
// container inits do only every second or so (TestHostKilled, which ignores zombies through
// /proc, sees the group die within milliseconds).
func groupEmpty(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// TestWatchdogEndsGroupWithHost: where there is no parent-death signal, a host killed by
// SIGKILL still takes its plugin's whole process group with it, through the watchdog alone.
// The plugin is a shell (no SDK, no watchdog of its own) running the test plugin with the
// host's pid hidden, so the SDK watches the shell, which lives; the test plugin forks a
// `sleep` that holds the plugin's pipes. Nothing but the watchdog ends any of them.
func TestWatchdogEndsGroupWithHost(t *testing.T) {
	command, err := json.Marshal([]string{"sh", "-c", `unset WEND_HOST_PID; "$0"; :`, bins.testPlugin})
	if err != nil {
		t.Fatal(err)
	}
	for i := range kills() {
		cmd, pid := startHost(t, watchdogHostEnv+"="+string(command))
		t.Cleanup(func() { killGroupOf(pid) })
		if groupEmpty(pid) {
			t.Fatalf("kill %d: plugin group %d empty while the host runs", i, pid)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		start := time.Now()
		for !groupEmpty(pid) {
			if time.Since(start) > slack(3*time.Second) {
				t.Fatalf("kill %d: plugin group %d still has processes %s after its host was killed", i, pid, time.Since(start))
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("kill %d: plugin group gone (reaped) %s after its host", i, time.Since(start).Round(time.Millisecond))
	}
}

// kills is how many hosts TestWatchdogEndsGroupWithHost kills: 3, or WEND_KILLS.
func kills() int {
	if n, err := strconv.Atoi(os.Getenv("WEND_KILLS")); err == nil && n > 0 {
		return n
	}
	return 3
}
