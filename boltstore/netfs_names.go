package boltstore

import "strings"

// bsdNetworkTypes names the statfs f_fstypename values of macOS and FreeBSD file systems where
// flock may hang or not exclude another host (boltdb#562), as netfs_linux.go's magic numbers do.
var bsdNetworkTypes = map[string]string{
	"nfs":    "NFS",
	"smbfs":  "SMB",
	"cifs":   "CIFS",
	"afpfs":  "AFP",
	"webdav": "WebDAV",
	"ncpfs":  "NetWare",
}

// bsdNetworkFS reports whether an f_fstypename (NUL-padded) is a network file system's, and
// which.
func bsdNetworkFS(fstypename []byte) (string, bool) {
	name, _, _ := strings.Cut(string(fstypename), "\x00")
	fs, ok := bsdNetworkTypes[strings.ToLower(name)]
	return fs, ok
}

// uncPath reports whether a Windows path names a network share directly: \\server\share\...
// or its long form \\?\UNC\server\share\... (\\?\C:\... and \\.\ device paths are local).
func uncPath(p string) bool {
	p = strings.ReplaceAll(p, "/", `\`)
	if rest, ok := strings.CutPrefix(p, `\\?\`); ok {
		return len(rest) >= 4 && strings.EqualFold(rest[:4], `UNC\`)
	}
	return strings.HasPrefix(p, `\\`) && !strings.HasPrefix(p, `\\.\`) && len(p) > 2 && p[2] != '\\'
}
