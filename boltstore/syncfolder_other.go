//go:build !windows

package boltstore

// syncFolder fsyncs a folder, which makes the entries created or renamed in it durable (on
// darwin os.File.Sync is fcntl F_FULLFSYNC, which also flushes the drive's cache).
func syncFolder(dir string) error { return syncFile(dir) }
