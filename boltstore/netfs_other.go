//go:build !linux || wend_portable

package boltstore

// networkFS is only implemented on Linux; elsewhere every path is accepted.
func networkFS(string) (string, bool) { return "", false }
