//go:build (darwin || freebsd) && !wend_portable

package boltstore

import "golang.org/x/sys/unix"

// networkFS reports whether dir is on a network file system, and which: one statfs, whose
// f_fstypename names the file system.
func networkFS(dir string) (string, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", false
	}
	return bsdNetworkFS(st.Fstypename[:])
}
