//go:build linux && wend_portable

package crashtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/proctest"
)

// TestWatchdogKillsPluginGroupOfKilledHost is the portable plugin host (darwin and FreeBSD's,
// built here with -tags wend_portable) through the CLI: `wend run` is SIGKILLed while its plugin
// runs an activity. The plugin runs as the child of a wrapper shell that has no parent-death
// signal, with the host pid hidden, so the SDK's own watchdog watches the live shell: only the
// host's watchdog process can end them, and it must kill the whole process group once the host
// is gone, with no later wend to reap. (Built without the tag, Linux's host leaves both alive
// here until the next wend reaps them: reap_test.go.)
func TestWatchdogKillsPluginGroupOfKilledHost(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	if err := exec.Command("setpriv", "--pdeathsig", "clear", "true").Run(); err != nil {
		t.Skipf("setpriv --pdeathsig (util-linux >= 2.33) is needed to defeat the parent-death signal: %v", err)
	}
	wend, plugin := bins(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wend.db")
	wf := filepath.Join(dir, "orphan.wend.yaml")
	src := fmt.Sprintf("wend: v1\nname: orphan\nplugins:\n  demo: {command: [setpriv, --pdeathsig, clear, env, -u, WEND_HOST_PID, sh, -c, '\"$0\"; exit $?', %q]}\n"+
		"steps:\n  - {id: nap, activity: demo.sleep, with: {ms: 600000}}\n", plugin)
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(wend, "run", "--id", "orphan", "--db", db, wf)
	var out syncBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// The activity has started once its step says so; the plugin is running by then.
	for deadline := time.Now().Add(30 * time.Second); proctest.Running(plugin, 0) == 0 || !strings.Contains(out.String(), "nap: demo.sleep scheduled"); {
		if time.Now().After(deadline) {
			_ = run.Process.Kill()
			t.Fatalf("the plugin did not start within 30s\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { _ = exec.Command("pkill", "-KILL", "-f", plugin).Run() })
	time.Sleep(200 * time.Millisecond)
	_ = run.Process.Signal(syscall.SIGKILL)
	_ = run.Wait()
	// A hang guard, not a speed claim: the watchdog reads EOF at once when the host dies.
	if n := proctest.Running(plugin, 30*time.Second); n != 0 {
		t.Fatalf("%d plugin processes outlived the killed host by 30s\n%s", n, out.String())
	}
}
