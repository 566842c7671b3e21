//go:build !linux

package boltstore

// lockHolders is nil where the kernel lists no file locks by process: inUse falls back on the
// writer's pid file.
func lockHolders(path string) []lockHolder { return nil }
