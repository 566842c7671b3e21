//go:build unix

package boltstore

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// killSelf ends this process as a crash does: no deferred work, no flush.
func killSelf() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// ownGroup puts a helper in its own process group, so killGroup reaches its children too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup SIGKILLs a helper started with ownGroup and every process it started.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// processCPU is the process's user and system CPU time so far: on a machine other jobs load,
// it moves far less than the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
