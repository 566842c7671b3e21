package boltstore

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The creation lock (PATH.lock, beside the database) makes one creator of a database at a
// time. A process holds it, an OS file lock (flock, LockFileEx), from before it looks for the
// database file until it has created it and removed what crashed creations left
// (removeCreationLeftovers). So while one process builds its temp file, no other deletes it
// as a leftover, and a temp file found by a process holding the lock is a crashed creator's:
// the lock ends with its process. The file is never removed (a removed lock file could be
// locked by one process while another creates and locks a new one); it holds the pid of the
// last process to take the lock.

// creationLockWait bounds the wait for another process's creation lock: it is held while a
// database is created, a few synced writes, and for the glob that looks for leftovers. A
// variable for tests.
var creationLockWait = 10 * time.Second

// lockCreation takes path's creation lock, waiting up to creationLockWait for another process
// that holds it; release lets it go.
func lockCreation(path string) (release func(), err error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creation lock: %w", err)
	}
	deadline := time.Now().Add(creationLockWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err = tryLockFile(f)
		if err == nil {
			break
		}
		if !errors.Is(err, errLocked) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, errLocked) {
				return nil, creationInUse(path, name)
			}
			return nil, fmt.Errorf("creation lock %s: %w", name, err)
		}
		time.Sleep(wait)
	}
	// The pid is for the message of a process that waits in vain; it is no part of the lock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(fmt.Appendf(nil, "%d\n", os.Getpid()), 0)
	}
	return func() { f.Close() }, nil // closing the file releases its lock
}

// creationInUse is the error of a process that waited for the creation lock in vain.
func creationInUse(path, name string) error {
	e := &InUseError{Path: path}
	if b, err := os.ReadFile(name); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			e.PID = pid
		}
	}
	return e
}
