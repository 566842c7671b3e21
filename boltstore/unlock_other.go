//go:build !unix

package boltstore

import "os"

// unlock is a no-op where bbolt's lock is not a flock: closing the file releases it.
func unlock(*os.File) {}
