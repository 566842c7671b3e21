//go:build darwin || freebsd

package plugins

import (
	"os"
	"syscall"
)

// stampHasInode: the stamp tells a file replaced by rename from the one it replaced.
const stampHasInode = true

// sysStamp adds the device, inode and change time the BSDs' stat gives.
func sysStamp(fi os.FileInfo, s *fileStamp) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino, s.ctime = uint64(st.Dev), st.Ino, st.Ctimespec.Nano()
	}
}

// statStamp is the stamp of the file at path.
func statStamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return stampOf(fi), nil
}
