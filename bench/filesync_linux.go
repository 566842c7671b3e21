package main

import (
	"errors"
	"os"
	"syscall"
)

// fdatasync makes f's data durable without its metadata but for what reading the data needs
// (its size), as bbolt and the store's log sync their files on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// preallocate gives f size bytes of allocated blocks, and sets its size: fallocate mode 0, so an
// overwrite inside them does not change the size. It makes the file of the stricter yardstick,
// the bare synced write a log could do at best. A file system that has no fallocate gets the
// size alone (ftruncate): a sparse file, whose writes still allocate blocks.
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
