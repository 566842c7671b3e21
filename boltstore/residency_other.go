//go:build !linux || wend_portable

package boltstore

// dropPages does nothing where the resident set of the mapping has not been measured.
func dropPages(addr uintptr, size int64) error { return nil }

// fileBackedRSS is not measured here: -1.
func fileBackedRSS() int64 { return -1 }
