//go:build unix && (!linux || wend_portable)

package plugins

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Where there is no parent-death signal and no pidfd (darwin, the BSDs; Linux under the
// wend_portable tag, which runs this path in CI), a plugin runs in its own process group and
// a watchdog joins that group: a small process (this same executable, see watchdog.go) that
// reads the host's lifeline pipe and SIGKILLs its own group when the pipe reports end of file,
// which the kernel does whenever the host dies, SIGKILL included. Being a member, the watchdog
// also keeps the group's id from being reused while the host lives: the host reaps the
// watchdog last, so every kill of the group's id reaches this plugin's group and nothing else.
type osGuard struct {
	watchdog *exec.Cmd
}

// lifeline is the pipe whose write end only the host holds (close-on-exec, so no child
// inherits it); every watchdog reads the read end.
var lifeline = sync.OnceValues(func() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	lifelineWriter = w // kept reachable for the host's whole life, never closed
	return r, nil
})

//lint:ignore U1000 never read: holding it keeps the write end open (no finalizer closes it)
var lifelineWriter *os.File

func (r *procRunner) launch() error {
	lr, err := lifeline()
	if err != nil {
		return fmt.Errorf("plugin watchdog: lifeline pipe: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("plugin watchdog: %w", err)
	}
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	// The leader is not reaped yet, so its group exists for the watchdog to join, even if the
	// plugin has already exited.
	wd := exec.Command(exe)
	wd.Env = []string{watchdogEnv + "=1"}
	wd.Dir = "/"
	wd.Stdin = lr
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: r.pid}
	if err := wd.Start(); err != nil {
		// A plugin never runs unguarded: end it now.
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
		_ = r.cmd.Wait()
		return fmt.Errorf("plugin watchdog: start %s: %w", exe, err)
	}
	r.guard.watchdog = wd
	r.register()
	go r.reap()
	return nil
}

// reap waits for the plugin to exit and reaps it, kills what is left of its group (the
// watchdog, an unreaped child of the host, still reserves the group's id), then reaps the
// watchdog.
func (r *procRunner) reap() {
	err := r.cmd.Wait()
	r.reapCommands() // before done: a stop or a retry that waits for the plugin waits for them too
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	_ = r.guard.watchdog.Wait()
	r.waitErr = err
	r.unregister()
	close(r.done)
}

// killGroup SIGKILLs the plugin's whole process group; a stopped (SIGSTOP) process dies too.
// Until reap has reaped the watchdog, the group's id cannot name another group.
func (r *procRunner) killGroup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.exited() || r.pid <= 0 {
		return
	}
	_ = syscall.Kill(-r.pid, syscall.SIGKILL)
}
