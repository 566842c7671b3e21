//go:build linux && !wend_portable

package plugins

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wendflow/wend/sdk/go/wire"
	"github.com/wendflow/wend/testkit/proctest"
)

// The docs/reliability.md P8 tests run the test binary in two extra roles, chosen in init (before TestMain) so
// main_test.go needs no change:
//   - reapHostEnv: a host with a registry (the JSON reapHost) running a long call, to be killed;
//   - reapWrapEnv: a plugin wrapper that defeats both orphan defences the registry backs up:
//     it clears its parent-death signal and runs the program the variable names as its child
//     (a forked child has none), hiding the host pid so the SDK watchdog watches the wrapper.
const (
	reapHostEnv = "WEND_REAP_TEST_HOST"
	reapWrapEnv = "WEND_REAP_TEST_WRAP"
)

// guardMembers is how many processes the guard adds to a plugin's process group: none here.
const guardMembers = 0

type reapHost struct {
	Registry string
	Command  []string
	Env      []string
	// Grandchild makes the plugin fork a child (its grandchild activity) first; the helper
	// prints "child N" before "pid N".
	Grandchild bool
}

func init() {
	if prog := os.Getenv(reapWrapEnv); prog != "" {
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, 0, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "wrapper: prctl:", err)
			os.Exit(2)
		}
		cmd := exec.Command(prog)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, wire.HostPIDEnv+"=") && !strings.HasPrefix(kv, reapWrapEnv+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "wrapper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if v := os.Getenv(reapHostEnv); v != "" {
		os.Exit(reapHostHelper(v))
	}
}

// reapHostHelper starts the plugin under a Host with a registry, prints "pid N" once the
// plugin serves, and sleeps in a call until killed.
func reapHostHelper(arg string) int {
	var cfg reapHost
	if err := json.Unmarshal([]byte(arg), &cfg); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	h, err := New([]Config{{Name: "orphan", Command: cfg.Command, Env: cfg.Env}}, Options{Registry: cfg.Registry})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if _, err := h.Describe(context.Background(), "orphan"); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if cfg.Grandchild {
		out, err := h.Execute(context.Background(), call("orphan", "grandchild", map[string]int{}), nil)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Printf("child %s\n", out)
	}
	h.mu.Lock()
	p := h.slots["orphan"].proc
	h.mu.Unlock()
	pid, _ := p.pid()
	fmt.Printf("pid %d\n", pid)
	_, err = h.Execute(context.Background(), call("orphan", "sleep", map[string]int{"ms": 600000}), nil)
	fmt.Println("error:", err)
	return 1
}

// kills is the number of host kills in TestReapAfterHostKill: 3, 10 with WEND_SOAK (tier T2
// of docs/reliability.md P8), or WEND_KILLS.
func kills() int {
	if n, err := strconv.Atoi(os.Getenv("WEND_KILLS")); err == nil && n > 0 {
		return n
	}
	if os.Getenv("WEND_SOAK") != "" {
		return 10
	}
	return 3
}

// TestReapAfterHostKill is P8 end to end: a host with a registry is SIGKILLed while its plugin
// runs a call; the plugin, run by a wrapper that defeats the parent-death signal and the SDK
// watchdog, survives as an orphan; Reap, as the next host would run it, kills its group.
func TestReapAfterHostKill(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "wend.db.plugins")
	arg, err := json.Marshal(reapHost{Registry: reg, Command: []string{os.Args[0]}, Env: []string{reapWrapEnv + "=" + bins.testPlugin}})
	if err != nil {
		t.Fatal(err)
	}
	n, orphansAfter, survivedHost := kills(), 0, 0
	var worst time.Duration
	for i := range n {
		cmd, pid := startHost(t, reapHostEnv+"="+string(arg))
		t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		// Without the registry this is where P8 fails: the plugin outlives its host, past the
		// SDK watchdog's 1 s period.
		time.Sleep(1500 * time.Millisecond)
		if len(proctest.Group(pid)) >= 2 {
			survivedHost++
		}
		rep, err := Reap(reg)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Reaped) != 1 || rep.Reaped[0].PID != pid || rep.Reaped[0].HostPID != cmd.Process.Pid {
			t.Fatalf("kill %d: reaped %+v, want plugin %d of host %d (report %+v)", i, rep.Reaped, pid, cmd.Process.Pid, rep)
		}
		took := waitGroupGone(t, pid, 3*time.Second)
		worst = max(worst, took)
		if len(proctest.Group(pid)) > 0 {
			orphansAfter++
		}
		if _, err := os.Stat(reg); !os.IsNotExist(err) {
			t.Fatalf("kill %d: registry still there after reaping its only entry (%v)", i, err)
		}
	}
	if survivedHost != n {
		t.Fatalf("the plugin outlived its killed host %d of %d times; the test needs it to (wrapper broken?)", survivedHost, n)
	}
	t.Logf("RELIABILITY suite=plugins test=P8 reap=1 kills=%d orphans_after_kill=%d orphans_after_3s=%d unrelated_killed=0 reap_to_gone_max_ms=%d",
		n, survivedHost, orphansAfter, worst.Milliseconds())
}

// TestReapPluginChildAfterHostKill: a plugin forks a child (which inherits
// neither the parent-death signal nor the SDK watchdog), then its host is SIGKILLed. The plugin
// dies with its host, its child does not; the next host's Reap must kill the child, which is
// still in the plugin's process group. Before, Reap found the plugin's pid gone and dropped
// the entry, leaving the child running for ever.
func TestReapPluginChildAfterHostKill(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "wend.db.plugins")
	arg, err := json.Marshal(reapHost{Registry: reg, Command: []string{bins.testPlugin}, Grandchild: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), reapHostEnv+"="+string(arg))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	r := bufio.NewReader(stdout)
	child, err := strconv.Atoi(strings.TrimPrefix(readLine(t, r, 10*time.Second), "child "))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(readLine(t, r, 10*time.Second), "pid "))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL); _ = syscall.Kill(-pid, syscall.SIGKILL) })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); proctest.Alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("plugin %d outlived its killed host; this test needs it to die with it", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !proctest.Alive(child) {
		t.Fatalf("the plugin's child %d died with the plugin; the test proves nothing", child)
	}
	rep, err := Reap(reg)
	if err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, pid, 3*time.Second)
	if len(rep.Reaped) != 1 || rep.Reaped[0].PID != pid {
		t.Errorf("report %+v, want the plugin's group reaped", rep)
	}
	t.Logf("RELIABILITY suite=plugins test=P8-child kills=1 children_after_kill=1 children_after_reap=0")
}

// spawn starts argv in its own process group, as a plugin runs, and stops it at the end.
func spawn(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	return cmd
}

// entryFor returns the registry entry pid would have from a host that has died since.
func entryFor(t *testing.T, pid int) *regEntry {
	t.Helper()
	e, err := identify(pid)
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	e.Plugin, e.HostPID, e.HostStart = "p", dead.Process.Pid, 1
	return e
}

func writeEntries(t *testing.T, path string, entries ...*regEntry) {
	t.Helper()
	for _, e := range entries {
		if err := registryAt(path).update(func(*regEntry) bool { return true }, e); err != nil {
			t.Fatal(err)
		}
	}
}

func readEntries(t *testing.T, path string) []*regEntry {
	t.Helper()
	_, entries, err := registryAt(path).load()
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestReapOrphanGroup: an orphaned group (a shell and its child) whose entry matches is killed
// whole within 3 s.
func TestReapOrphanGroup(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "reg")
	orphan := spawn(t, "sh", "-c", "sleep 1000 & wait")
	pgid := orphan.Process.Pid
	for len(proctest.Group(pgid)) < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	writeEntries(t, reg, entryFor(t, pgid))
	rep, err := Reap(reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reaped) != 1 || rep.Skipped != 0 || rep.Kept != 0 {
		t.Fatalf("report %+v, want one reaped", rep)
	}
	took := waitGroupGone(t, pgid, 3*time.Second)
	t.Logf("orphan group %d gone %s after Reap", pgid, took.Round(time.Millisecond))
}

// TestReapDecoys: entries whose pid now belongs to an unrelated process — a different start
// time (the pid was recycled), a different executable, another boot or pid namespace — are
// dropped and nothing is signalled (go-plugin PR #320); entries of a live host stay.
func TestReapDecoys(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "reg")
	decoys := map[string]*regEntry{}
	var pids []int
	mk := func(name string, change func(*regEntry)) {
		cmd := spawn(t, "sleep", "1000")
		e := entryFor(t, cmd.Process.Pid)
		change(e)
		decoys[name] = e
		pids = append(pids, cmd.Process.Pid)
	}
	mk("recycled pid", func(e *regEntry) { e.Start-- })
	mk("other exe", func(e *regEntry) { e.Exe = bins.testPlugin })
	mk("other boot", func(e *regEntry) { e.Boot = "00000000-0000-0000-0000-000000000000" })
	mk("other pid namespace", func(e *regEntry) { e.PIDNS = "pid:[1]" })
	mk("this host", func(e *regEntry) { e.HostPID, e.HostStart = self().pid, self().start })
	host := spawn(t, "sleep", "1000") // another live host: its plugins are its business
	hostStart, _, err := procStart(host.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	mk("live host", func(e *regEntry) { e.HostPID, e.HostStart = host.Process.Pid, hostStart })
	gone := spawn(t, "sleep", "1000")
	goneEntry := entryFor(t, gone.Process.Pid)
	_ = syscall.Kill(gone.Process.Pid, syscall.SIGKILL)
	_ = gone.Wait()
	decoys["exited"] = goneEntry

	for _, e := range decoys {
		writeEntries(t, reg, e)
	}
	rep, err := Reap(reg)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	unrelatedKilled := 0
	for _, pid := range pids {
		if !proctest.Alive(pid) {
			unrelatedKilled++
		}
	}
	t.Logf("RELIABILITY suite=plugins test=P8 decoys=%d unrelated_killed=%d", len(decoys), unrelatedKilled)
	if unrelatedKilled != 0 || len(rep.Reaped) != 0 {
		t.Fatalf("%d unrelated processes killed; report %+v", unrelatedKilled, rep)
	}
	if rep.Skipped != 5 || rep.Kept != 2 || rep.Corrupt != 0 {
		t.Errorf("report %+v, want 5 skipped (recycled pid, other exe, other boot, other pid namespace, exited) and 2 kept (this host, live host)", rep)
	}
	left := readEntries(t, reg)
	if len(left) != 2 || !left[0].same(decoys["this host"]) && !left[1].same(decoys["this host"]) {
		t.Errorf("registry after Reap holds %+v, want the two live hosts' entries", left)
	}
}

// TestReapCorruptRegistry: unparseable lines are dropped and counted, the rest still handled;
// an unreadable registry is an error naming it; nothing panics.
func TestReapCorruptRegistry(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	orphan := spawn(t, "sleep", "1000")
	good, err := json.Marshal(entryFor(t, orphan.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	garbage := "not json\n{\"pid\": \n\x00\x00\x00\n{\"pid\": -5}\n" + string(good) + "\n" + strings.Repeat("x", 1<<20) + "\n"
	if err := os.WriteFile(reg, []byte(garbage), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Reap(reg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Corrupt != 5 || len(rep.Reaped) != 1 {
		t.Fatalf("report %+v, want 5 corrupt lines and the good entry reaped", rep)
	}
	waitGroupGone(t, orphan.Process.Pid, 3*time.Second)
	if _, err := os.Stat(reg); !os.IsNotExist(err) {
		t.Errorf("registry not removed once empty: %v", err)
	}

	for name, setup := range map[string]func(string) error{
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
		"empty":     func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"missing":   func(string) error { return nil },
	} {
		p := filepath.Join(dir, name)
		if err := setup(p); err != nil {
			t.Fatal(err)
		}
		rep, err := Reap(p)
		switch {
		case name == "directory" && (err == nil || !strings.Contains(err.Error(), p)):
			t.Errorf("%s: error %v, want one naming %s", name, err, p)
		case name != "directory" && err != nil:
			t.Errorf("%s: %v", name, err)
		case len(rep.Reaped)+rep.Skipped+rep.Kept+rep.Corrupt != 0:
			t.Errorf("%s: report %+v, want empty", name, rep)
		}
	}
}

// TestHostRegistry: a Host records each plugin process it starts, with the executable that
// serves, and drops the entry when the process ends (crash or Close); hosts sharing a registry
// keep each other's entries.
func TestHostRegistry(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "reg")
	h1, _ := newHost(t, Options{Registry: reg}, testPlugin("a", ""))
	h2, _ := newHost(t, Options{Registry: reg}, testPlugin("b", ""),
		Config{Name: "wrapped", Command: []string{"env", bins.testPlugin}})
	ctx := context.Background()
	for _, c := range []struct {
		h *Host
		p string
	}{{h1, "a"}, {h2, "b"}, {h2, "wrapped"}} {
		if _, err := c.h.Execute(ctx, call(c.p, "noop", nil), nil); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := filepath.EvalSymlinks(bins.testPlugin)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": pidOf(t, h1, "a"), "b": pidOf(t, h2, "b"), "wrapped": pidOf(t, h2, "wrapped")}
	check := func() {
		t.Helper()
		got := map[string]int{}
		for _, e := range readEntries(t, reg) {
			if e == nil {
				t.Fatal("corrupt line in the registry")
			}
			got[e.Plugin] = e.PID
			if e.Exe != exe || e.HostPID != os.Getpid() || e.Start == 0 || e.Boot == "" || e.PIDNS == "" {
				t.Errorf("entry %+v: want exe %s (the program that serves, not a wrapper), host %d", e, exe, os.Getpid())
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("registry holds %v, want %v", got, want)
		}
	}
	check()
	rep, err := Reap(reg) // all ours: left alone
	if err != nil || rep.Kept != 3 || len(rep.Reaped) != 0 {
		t.Fatalf("Reap of a live host's registry: %+v, %v", rep, err)
	}
	killPlugin(t, h1, "a")
	delete(want, "a")
	check()
	if _, err := h1.Execute(ctx, call("a", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	want["a"] = pidOf(t, h1, "a")
	check()
	if err := h2.Close(); err != nil {
		t.Fatal(err)
	}
	delete(want, "b")
	delete(want, "wrapped")
	check()
	if err := h1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(reg); !os.IsNotExist(err) {
		t.Errorf("registry left after every host closed: %v", err)
	}
}

// TestRegistryUnwritable: a registry the host cannot write is a warning, not a failed start.
func TestRegistryUnwritable(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "missing-dir", "reg")
	h, logs := newHost(t, Options{Registry: reg}, testPlugin("t", ""))
	if _, err := h.Execute(context.Background(), call("t", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "plugin registry "+reg) {
		t.Errorf("no registry warning in the log:\n%s", logs)
	}
}

// TestReapLeftChildrenByToken: once the plugin is gone, Reap kills a process of its group only
// when it carries the plugin's token: a stranger in a group that reused the id is spared, and
// an entry without a token (an older wend's) kills nothing but a matching leader.
func TestReapLeftChildrenByToken(t *testing.T) {
	for _, tc := range []struct {
		name       string
		childToken string // the child's groupEnv value
		entryToken string
		killed     bool
	}{
		{"the plugin's child", "tok-1", "tok-1", true},
		{"a stranger", "", "tok-1", false},
		{"another plugin's child", "tok-2", "tok-1", false},
		{"an entry without a token", "tok-1", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := filepath.Join(t.TempDir(), "reg")
			cmd := exec.Command("sh", "-c", "sleep 1000 & echo $!; wait")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if tc.childToken != "" {
				cmd.Env = append(os.Environ(), groupEnv+"="+tc.childToken)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			leader := cmd.Process.Pid
			t.Cleanup(func() { _ = syscall.Kill(-leader, syscall.SIGKILL) })
			child, err := strconv.Atoi(readLine(t, bufio.NewReader(out), 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			// Until the child has exec'd sleep, /proc/PID/environ may read empty (the kernel is
			// swapping its memory), and Reap would rightly spare a process without the token.
			waitExec(t, child, "sleep")
			e := entryFor(t, leader)
			e.Group = tc.entryToken
			_ = syscall.Kill(leader, syscall.SIGKILL) // the plugin dies; its child stays in the group
			_ = cmd.Wait()
			writeEntries(t, reg, e)
			rep, err := Reap(reg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.killed {
				waitGroupGone(t, leader, 3*time.Second)
				if len(rep.Reaped) != 1 {
					t.Errorf("report %+v, want one reaped", rep)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
			if !proctest.Alive(child) || len(rep.Reaped) != 0 {
				t.Errorf("child alive %v, report %+v: a process without the entry's token was killed", proctest.Alive(child), rep)
			}
		})
	}
}

// waitExec waits until pid runs the program named comm (/proc/PID/comm).
func waitExec(t *testing.T, pid int, comm string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d does not run %s after a minute (comm %q, %v)", pid, comm, b, err)
		}
	}
}
