package boltstore

import (
	"errors"
	"os"
	"syscall"
)

// preallocate gives f size bytes of allocated blocks, and sets its size: fallocate mode 0, so an
// overwrite inside them changes neither the size nor the allocation, and its fdatasync need not
// commit the file system's journal (docs/design.md, "The log's files"). A file system that has
// no fallocate gets the size alone (ftruncate): a sparse file, whose writes still allocate
// blocks, so the sync costs about what an append's does; nothing else changes.
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
