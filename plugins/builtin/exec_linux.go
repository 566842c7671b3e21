package builtin

import "syscall"

// setDeathSignal kills the group's leader if the plugin process dies first: it left the
// plugin's process group, which the host kills. Its children are not covered (a shell's
// background job lives on): the group's record (plugins/cmdgroup) is.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
