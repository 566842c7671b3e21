//go:build !linux

package boltstore

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
