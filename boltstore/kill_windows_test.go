package boltstore

import (
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/windows"
)

// killSelf ends this process as a crash does: TerminateProcess, no deferred work, no flush.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
}

// ownGroup does nothing on Windows: helpers start no children of their own.
func ownGroup(*exec.Cmd) {}

// killGroup terminates a helper (TerminateProcess).
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

// processCPU is the process's user and kernel CPU time so far (GetProcessTimes).
func processCPU() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100) // Filetime counts 100 ns ticks
}
