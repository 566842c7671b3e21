//go:build !linux || wend_portable

package boltstore

import "os"

func fdatasync(f *os.File) error { return f.Sync() }

// writeSyncs is false: the log writes a record, then syncs it (wal.sync).
const writeSyncs = false

// writeSync is never called here (writeSyncs).
func writeSync(*os.File, []byte, int64) (done bool, err error) { return false, nil }
