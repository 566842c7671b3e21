//go:build unix

package boltstore

import (
	"os"
	"syscall"
)

// unlock releases the flock bbolt took on f.
func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
