//go:build linux && !wend_portable

package boltstore

import "syscall"

// Magic numbers of statfs(2) f_type for file systems where flock may hang or not exclude
// another host (boltdb#562).
var networkMagic = map[uint32]string{
	0x6969:     "NFS",
	0x517b:     "SMB",
	0xfe534d42: "SMB2",
	0xff534d42: "CIFS",
}

// networkFS reports whether dir is on a network file system, and which. Cheap: one statfs.
func networkFS(dir string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false
	}
	name, ok := networkMagic[uint32(st.Type)]
	return name, ok
}
