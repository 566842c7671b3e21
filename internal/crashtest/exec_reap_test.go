//go:build linux

package crashtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/proctest"
)

// TestExecCommandDiesWithItsTry (Linux: the script reads /proc) kills `wend run` while an `exec` step runs a shell whose
// background grandchild (sleep) survives the kill in a process group of its own. The next
// `wend resume` on the database must kill that grandchild before the retried try's command
// starts, so the two never run side by side; a Ctrl-C then ends the retried command's
// grandchild too. The portable build (wend_portable) runs the same record-and-reap path that
// darwin and FreeBSD run.
func TestExecCommandDiesWithItsTry(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wend.db")
	pids, log := filepath.Join(dir, "pids"), filepath.Join(dir, "log")
	// Each try: say whether an earlier try's grandchild still runs (a zombie does not: this
	// container's init may never reap it), then start its own and wait.
	script := `for p in $(cat "$1" 2>/dev/null); do s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); ` +
		`[ -n "$s" ] && [ "$s" != Z ] && echo "beside $p" >> "$2"; done; ` +
		`sleep 300 & echo $! >> "$1"; echo "try $!" >> "$2"; wait`
	src := fmt.Sprintf("wend: v1\nname: orphan\nplugins: {sh: {builtin: exec}}\nsteps:\n"+
		"  - {id: nap, activity: sh.run, with: {argv: [%q, %q, %q], shell: true}, retry: {tries: 5, backoff: [10ms]}}\n", script, pids, log)
	wf := filepath.Join(dir, "orphan.wend.yaml")
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(wend, "run", "--id", "orphan", "--db", db, wf)
	var runOut syncBuffer
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	first := grandchild(t, pids, 1, &runOut)
	t.Cleanup(func() { _ = syscall.Kill(first, syscall.SIGKILL) })
	// The exec plugin (the shell's parent) is frozen first, then wend is killed: a plugin that
	// notices its host is gone cancels the try and kills the command itself, which would leave
	// nothing to reap. Linux's parent-death signal or the portable build's watchdog ends it.
	sleep, _ := proctest.Read(first)
	sh, _ := proctest.Read(sleep.PPID)
	if plugin, _ := proctest.Read(sh.PPID); plugin.PPID != run.Process.Pid {
		t.Fatalf("the shell's parent %d is not wend's plugin", sh.PPID)
	}
	_ = syscall.Kill(sh.PPID, syscall.SIGSTOP)
	_ = run.Process.Signal(syscall.SIGKILL)
	_ = run.Wait()
	time.Sleep(1500 * time.Millisecond) // past the plugin SDK's 1 s watchdog: the plugin is gone
	if !proctest.Alive(first) {
		t.Fatalf("the grandchild %d died with wend: nothing was left to reap, so this test proves nothing", first)
	}

	resume := exec.Command(wend, "resume", "--db", db)
	var out syncBuffer
	resume.Stdout, resume.Stderr = &out, &out
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resume.Process.Kill(); _ = resume.Wait() }()
	second := grandchild(t, pids, 2, &out)
	t.Cleanup(func() { _ = syscall.Kill(second, syscall.SIGKILL) })
	if proctest.Alive(first) {
		t.Errorf("the killed wend's grandchild %d still runs beside the retried try's", first)
	}
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "beside") {
		t.Errorf("the retried try's command ran beside the old one:\n%s", b)
	}
	if !strings.Contains(out.String(), "wend: killed 1 command group(s) left by a previous wend") {
		t.Errorf("wend resume did not say it killed the command group:\n%s", out.String())
	}
	// A clean stop (Ctrl-C) ends the retried try's grandchild too.
	_ = resume.Process.Signal(syscall.SIGINT)
	if err := resume.Wait(); exitCode(err) != 130 {
		t.Errorf("wend resume after SIGINT: %v, want exit 130\n%s", err, out.String())
	}
	for deadline := time.Now().Add(20 * time.Second); proctest.Alive(second); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d of the stopped wend still runs", second)
		}
	}
	if ents, _ := os.ReadDir(db + ".commands"); len(ents) != 0 {
		t.Errorf("command records left after a clean stop: %v", ents)
	}
}

// grandchild waits until the file pids holds n pids and returns the last.
func grandchild(t *testing.T, pids string, n int, out *syncBuffer) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(pids)
		if f := strings.Fields(string(b)); len(f) >= n && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(f[n-1])
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no try %d started within 60s\n%s", n, out.String())
	return 0
}
