//go:build linux && !wend_portable

package boltstore

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// linkCheck tells whether a file is still the one at its path, by device and inode. It asks
// statx for the inode only: a stat that reads the file's times makes Linux (6.13 on, multigrain
// timestamps) stamp the next write with a fine-grained time, so every log sync would also
// write the segment's inode. docs/performance.md has the measurement. The open file's inode is
// read once, when the check is made; each check is then one statx of the path, which allocates
// nothing: the writer asks before every batch.
type linkCheck struct {
	ino          uint64
	major, minor uint32
	path         []byte // NUL-terminated, for the system call
}

func newLinkCheck(f *os.File, path string) (linkCheck, error) {
	var st unix.Statx_t
	rc, err := f.SyscallConn()
	if err != nil {
		return linkCheck{}, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.Statx(int(fd), "", unix.AT_EMPTY_PATH, unix.STATX_INO, &st)
	}); err != nil {
		return linkCheck{}, err
	}
	if serr != nil {
		return linkCheck{}, &os.PathError{Op: "statx", Path: f.Name(), Err: serr}
	}
	p, err := unix.ByteSliceFromString(path)
	if err != nil {
		return linkCheck{}, err
	}
	return linkCheck{ino: st.Ino, major: st.Dev_major, minor: st.Dev_minor, path: p}, nil
}

// linked reports whether the file is still the one at the path; a path that cannot be read
// (gone, or a folder on it removed) is not it.
func (c *linkCheck) linked() (bool, error) {
	var st unix.Statx_t
	cwd := unix.AT_FDCWD
	_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(cwd), uintptr(unsafe.Pointer(&c.path[0])),
		0, unix.STATX_INO, uintptr(unsafe.Pointer(&st)), 0)
	if errno != 0 {
		return false, nil
	}
	return st.Ino == c.ino && st.Dev_major == c.major && st.Dev_minor == c.minor, nil
}
