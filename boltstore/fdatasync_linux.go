//go:build linux && !wend_portable

package boltstore

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fdatasync makes f's data durable without its metadata but for what reading the data needs
// (its size), as bbolt syncs its file on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// writeSyncs says writeSync can do its work here, unless the kernel refuses it.
const writeSyncs = true

// writeSync writes b at off and makes it durable in one system call: pwritev2 with RWF_DSYNC
// (Linux 4.7), which runs the file system's fdatasync on the range written once the write is
// done, the device's cache flushed as fdatasync flushes it. done is false, with nothing written,
// when the call is refused before it writes: a kernel that does not know it or the flag, a
// seccomp filter that forbids it (EPERM), or an argument it takes for invalid, which the write
// and fdatasync the caller then makes report for themselves.
func writeSync(f *os.File, b []byte, off int64) (done bool, err error) {
	fd := int(f.Fd())
	for first := true; len(b) > 0; first = false {
		n, err := unix.Pwritev2(fd, [][]byte{b}, off, unix.RWF_DSYNC)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case first && (errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) ||
			errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL)):
			return false, nil
		case err != nil:
			return true, &os.PathError{Op: "pwritev2", Path: f.Name(), Err: err}
		}
		b, off = b[n:], off+int64(n)
	}
	return true, nil
}
