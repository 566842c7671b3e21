//go:build !linux || wend_portable

package boltstore

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
