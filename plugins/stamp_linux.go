//go:build linux && !wend_portable

package plugins

import (
	"os"
	"syscall"
)

// stampHasInode: the stamp tells a file replaced by rename from the one it replaced.
const stampHasInode = true

// sysStamp adds the device, inode and change time Linux's stat gives.
func sysStamp(fi os.FileInfo, s *fileStamp) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino, s.ctime = uint64(st.Dev), st.Ino, st.Ctim.Nano()
	}
}

// statStamp is stampOf(os.Stat(path)) without the FileInfo: stat into the stack. Each try's
// check of its plugin's file (build.changed) is one of these, and os.Stat's allocations and
// conversions cost more than the system call itself (docs/performance.md).
func statStamp(path string) (fileStamp, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Stat(path, &st)
		if err == nil {
			break
		}
		if err != syscall.EINTR {
			return fileStamp{}, &os.PathError{Op: "stat", Path: path, Err: err}
		}
	}
	return fileStamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, nil
}
