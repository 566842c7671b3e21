//go:build unix

package boltstore

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process pid exists (one of another user's counts).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
