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
