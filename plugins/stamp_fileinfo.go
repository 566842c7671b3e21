//go:build !darwin && !freebsd && (!linux || wend_portable)

package plugins

import "os"

// stampHasInode: only size and modification time tell files apart.
const stampHasInode = false

// sysStamp adds nothing: the stamp is size and modification time alone (Windows' FileInfo
// has no inode or change time). A file replaced by one of the same size and modification
// time — a copy that keeps times, or a rename of such a copy — is not seen as a new build
// until its size or time differs.
func sysStamp(os.FileInfo, *fileStamp) {}

// statStamp is the stamp of the file at path.
func statStamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return stampOf(fi), nil
}
