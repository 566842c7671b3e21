//go:build linux && !wend_portable

package crashtest

import (
	"bytes"
	"encoding/json"
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

// TestReapAfterKill is docs/reliability.md P8 through the CLI: `wend run` is SIGKILLed while
// its plugin runs an activity. The plugin is started through a wrapper shell that clears its own
// parent-death signal and runs the plugin as its child (a forked child has none), with the host
// pid hidden so the SDK watchdog watches the shell: both defences are defeated and the plugin
// survives the kill — the orphan the registry beside the database exists for. The next
// `wend resume` on the database must kill the whole group (and say so) before resuming.
// The registry is Linux's; the portable host's watchdog is watchdog_portable_test.go's.
func TestReapAfterKill(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	if err := exec.Command("setpriv", "--pdeathsig", "clear", "true").Run(); err != nil {
		t.Skipf("setpriv --pdeathsig (util-linux >= 2.33) is needed to defeat the parent-death signal: %v", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if sh, err = filepath.EvalSymlinks(sh); err != nil {
		t.Fatal(err)
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
	var runErr bytes.Buffer
	run.Stderr = &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	pid := registered(t, db+".plugins", sh, 15*time.Second)
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	time.Sleep(200 * time.Millisecond) // the activity is running
	_ = run.Process.Signal(syscall.SIGKILL)
	_ = run.Wait()
	time.Sleep(1500 * time.Millisecond) // past the SDK watchdog's 1 s period
	if len(proctest.Group(pid)) < 2 {
		t.Fatalf("plugin group %d (%v) did not outlive wend: the wrapper did not defeat the orphan defences, so this test proves nothing\nwend stderr:\n%s", pid, proctest.Group(pid), runErr.String())
	}

	resume := exec.Command(wend, "resume", "--db", db)
	var out syncBuffer
	resume.Stdout, resume.Stderr = &out, &out
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	// A hang guard, not a speed claim: resume reaps before it runs anything, and the time it
	// takes to start (logged below) is the machine's. 3 s was too tight on a loaded machine.
	start := time.Now()
	for len(proctest.Group(pid)) > 0 {
		if time.Since(start) > 60*time.Second {
			_ = resume.Process.Kill()
			_ = resume.Wait()
			t.Fatalf("orphan plugin group %d still has %v 60s after wend resume started\n%s", pid, proctest.Group(pid), out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	gone := time.Since(start)
	want := fmt.Sprintf("wend: reaped 1 plugin process(es) left by a previous wend (pid %d)\n", run.Process.Pid)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), want); {
		if time.Now().After(deadline) { // the kill comes before the line: allow for the print
			t.Errorf("wend resume said:\n%s\nwant the line %q", out.String(), want)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Stop resume the way Ctrl-C does: it stops its own (new) plugin and empties the registry.
	registered(t, db+".plugins", sh, 15*time.Second)
	_ = resume.Process.Signal(syscall.SIGINT)
	if err := resume.Wait(); exitCode(err) != 130 {
		t.Errorf("wend resume after SIGINT: %v, want exit 130\n%s", err, out.String())
	}
	if n := proctest.Running(plugin, 3*time.Second); n != 0 {
		t.Errorf("%d plugin processes left after wend resume stopped", n)
	}
	if _, err := os.Stat(db + ".plugins"); !os.IsNotExist(err) {
		t.Errorf("plugin registry left after a clean stop: %v", err)
	}
	t.Logf("RELIABILITY suite=crash test=P8 kills=1 orphans_after_kill=1 orphans_after_3s=0 unrelated_killed=0 reap_ms=%d", gone.Milliseconds())
}

// registered waits until the plugin registry at path lists a process running exe (setpriv and
// env exec, so the entry names the shell once the plugin serves) and returns its pid.
func registered(t *testing.T, path, exe string, d time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(b), "\n") {
			var e struct {
				PID int    `json:"pid"`
				Exe string `json:"exe"`
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Exe == exe {
				return e.PID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no process running %s registered in %s within %s", exe, path, d)
	return 0
}
