//go:build (!linux && !darwin && !freebsd && !windows) || wend_portable

package boltstore

// networkFS is implemented on Linux, macOS, FreeBSD and Windows; elsewhere (and in the
// portable build) every path is accepted.
func networkFS(string) (string, bool) { return "", false }
