//go:build unix

package boltstore

import (
	"os"
	"syscall"
)

// unlock releases the flock bbolt took on f.
func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// tryLock takes the flock bbolt takes, without waiting; false when another holds it.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
