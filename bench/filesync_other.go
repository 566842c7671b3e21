//go:build !linux

package main

import "os"

// fdatasync is an fsync where there is no fdatasync, as the store's log does.
func fdatasync(f *os.File) error { return f.Sync() }

// preallocate sets f's size (ftruncate): no portable call allocates blocks.
func preallocate(f *os.File, size int64) error { return f.Truncate(size) }
