//go:build linux && !wend_portable

package boltstore

import (
	"errors"
	"os"
	"syscall"
)

// preallocate gives f size bytes of allocated blocks, and sets its size: fallocate mode 0, so an
// overwrite inside them does not change the size: the control file the segment fill test
// compares the log's segments with, which are zero-filled instead (walfill.go). A file system
// that has no fallocate gets the size alone (ftruncate): a sparse file, whose writes still
// allocate blocks.
func preallocate(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return f.Truncate(size)
	}
	if err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}
