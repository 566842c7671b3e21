//go:build unix

package plugins

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupAttr starts a test's helper process in its own process group.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroupOf SIGKILLs the process group pgid.
func killGroupOf(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// startHost runs this test binary as a plugin host: env selects the helper TestMain runs, which
// starts a plugin and prints "pid N". It returns the host and the plugin's pid; the host's
// process group is killed when the test ends.
func startHost(t *testing.T, env string) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	line := readLine(t, bufio.NewReader(stdout), 10*time.Second)
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	if err != nil {
		t.Fatalf("host helper said %q", line)
	}
	return cmd, pid
}

// readLine reads one line from r with a timeout.
func readLine(t *testing.T, r *bufio.Reader, d time.Duration) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		line, _ := r.ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	select {
	case line := <-ch:
		return line
	case <-time.After(d):
		t.Fatalf("no line within %s", d)
		return ""
	}
}
