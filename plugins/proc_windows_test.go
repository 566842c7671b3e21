//go:build windows

package plugins

import (
	"os"
	"syscall"
)

// groupAttr adds nothing on Windows: the helper is ended by killGroupOf.
func groupAttr() *syscall.SysProcAttr { return nil }

// killGroupOf ends the process pid (Windows has no process groups to signal).
func killGroupOf(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
