package boltstore

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// InUseError is Open's error when another process holds the database's lock.
type InUseError struct {
	Path string
	PID  int // 0 when no holder could be named
	// Reading is true when the holder named has the database open for reading only (wend
	// list, show, check...), or when only readers can hold it and none could be named.
	Reading bool
}

func (e *InUseError) Error() string {
	who := "pid unknown"
	switch {
	case e.PID > 0 && e.Reading:
		who = "pid " + strconv.Itoa(e.PID) + ", which has it open for reading"
	case e.PID > 0:
		who = "pid " + strconv.Itoa(e.PID)
	case e.Reading:
		who = "a process that has it open for reading, pid unknown"
	}
	return fmt.Sprintf("database %s is in use by another wend process (%s)", e.Path, who)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// lockHolder is a process holding the database file's lock, with the kind of lock the kernel
// lists: exclusive for an open store, writing or reading (both take bbolt's lock as a writer),
// shared for the read-only walk every Open makes first.
type lockHolder struct {
	pid    int
	shared bool
}

// inUse is the error of an Open that timed out on the file's lock. A writer records its pid
// in path.pid right after it takes the lock; a reader records none, and a writer killed
// leaves its file behind. So where the kernel lists the lock's holders (lockHolders, Linux),
// the holder is named, and said to read unless it is the writer path.pid names; elsewhere
// path.pid's pid is named only while that process lives, and otherwise the holder is a reader.
func inUse(path string) error {
	e := &InUseError{Path: path}
	recorded := 0
	if b, err := os.ReadFile(path + ".pid"); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			recorded = pid
		}
	}
	if hs := lockHolders(path); len(hs) > 0 {
		h := hs[0]
		for _, c := range hs {
			if c.pid == recorded && !c.shared { // the writer: the one to stop
				h = c
				break
			}
		}
		e.PID, e.Reading = h.pid, h.shared || h.pid != recorded
		return e
	}
	if recorded > 0 && pidAlive(recorded) {
		e.PID = recorded
		return e
	}
	e.Reading = true
	return e
}
