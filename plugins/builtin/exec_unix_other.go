//go:build unix && !linux

package builtin

import "syscall"

// setDeathSignal does nothing: only Linux has a parent-death signal. A command left by a
// killed plugin is found by its record (plugins/cmdgroup) instead.
func setDeathSignal(*syscall.SysProcAttr) {}
