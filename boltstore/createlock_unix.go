//go:build unix

package boltstore

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is tryLockFile's error when another process holds the lock.
var errLocked = syscall.EWOULDBLOCK

// tryLockFile takes an exclusive flock on f without waiting; closing f releases it.
func tryLockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
