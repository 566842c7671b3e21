//go:build linux && !wend_portable

package boltstore

import (
	"os"
	"syscall"
)

// fdatasync makes f's data durable without its metadata but for what reading the data needs
// (its size), as bbolt syncs its file on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
