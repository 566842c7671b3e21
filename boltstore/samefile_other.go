//go:build !linux || wend_portable

package boltstore

import "os"

// sameFileAt reports whether f is still the file at path (os.SameFile: device and inode, or
// the volume and file index on Windows).
func sameFileAt(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	at, err := os.Stat(path)
	if err != nil {
		return false, nil // gone (or unreadable): not the file we write
	}
	return os.SameFile(fi, at), nil
}
