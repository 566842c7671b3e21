//go:build linux && !wend_portable

package boltstore

import (
	"os"

	"golang.org/x/sys/unix"
)

// sameFileAt reports whether f is still the file at path, by device and inode. It asks statx
// for the inode only: a stat that reads the file's times makes Linux (6.13 on, multigrain
// timestamps) stamp the next write with a fine-grained time, so every log sync would also
// write the segment's inode. docs/performance.md has the measurement.
func sameFileAt(f *os.File, path string) (bool, error) {
	var open, at unix.Statx_t
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.Statx(int(fd), "", unix.AT_EMPTY_PATH, unix.STATX_INO, &open)
	}); err != nil {
		return false, err
	}
	if serr != nil {
		return false, &os.PathError{Op: "statx", Path: f.Name(), Err: serr}
	}
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_INO, &at); err != nil {
		return false, nil // gone (or unreadable): not the file we write
	}
	return open.Ino == at.Ino && open.Dev_major == at.Dev_major && open.Dev_minor == at.Dev_minor, nil
}
