package builtin

import "syscall"

// setDeathSignal kills the command if the plugin process dies first: it left the plugin's
// process group, which the host kills.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
