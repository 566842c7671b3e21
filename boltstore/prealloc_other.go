//go:build !linux || wend_portable

package boltstore

import "os"

// preallocate sets f's size (ftruncate): no portable call allocates blocks, so writes into the
// file still allocate them and cost about what an append does (prealloc_linux.go).
func preallocate(f *os.File, size int64) error { return f.Truncate(size) }
