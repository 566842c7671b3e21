package boltstore

import (
	"os"

	"golang.org/x/sys/windows"
)

// errLocked is tryLockFile's error when another process holds the lock.
var errLocked = windows.ERROR_LOCK_VIOLATION

// tryLockFile takes an exclusive lock on f's first byte without waiting (LockFileEx); closing
// f releases it.
func tryLockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}
