//go:build linux && !wend_portable

package plugins

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux a plugin runs in its own process group with a parent-death SIGKILL; the registry
// (registry_linux.go) backs both up for a plugin that defeats them.
type osGuard struct{}

// launch starts the process from a goroutine locked to its OS thread for the process's whole
// life: Linux sends the parent-death signal when the *thread* that forked exits, and the Go
// runtime ends a thread whose locked goroutine returns (golang/go#27505).
func (r *procRunner) launch() error {
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := r.cmd.Start(); err != nil {
			started <- err
			return
		}
		r.pid = r.cmd.Process.Pid
		r.register()
		started <- nil
		r.reap()
	}()
	return <-started
}

// reap waits for the process to exit, kills what is left of its group while the group id is
// still reserved by the unreaped leader (waitid with WNOWAIT), then reaps it.
func (r *procRunner) reap() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, r.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	r.reapCommands() // before done: a stop or a retry that waits for the plugin waits for them too
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	r.waitErr = r.cmd.Wait()
	r.unregister()
	close(r.done)
}

// killGroup SIGKILLs the plugin's whole process group; a stopped (SIGSTOP) process dies too.
// The unreaped leader keeps the group id from being reused until reap.
func (r *procRunner) killGroup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.exited() || r.pid <= 0 {
		return
	}
	_ = syscall.Kill(-r.pid, syscall.SIGKILL)
}
