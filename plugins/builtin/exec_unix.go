//go:build unix

package builtin

import (
	"os/exec"
	"syscall"
)

var platformEnv []string

func shellArgv(argv []string) []string {
	return append([]string{"/bin/sh", "-c", argv[0], "sh"}, argv[1:]...)
}

// ownGroup runs cmd in a process group of its own and makes a cancel kill the whole group, so
// the command's children end with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
