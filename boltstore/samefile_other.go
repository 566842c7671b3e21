//go:build !linux || wend_portable

package boltstore

import "os"

// linkCheck tells whether a file is still the one at its path (os.SameFile: device and inode,
// or the volume and file index on Windows).
type linkCheck struct {
	f    *os.File
	name string
}

func newLinkCheck(f *os.File, path string) (linkCheck, error) {
	return linkCheck{f: f, name: path}, nil
}

// linked reports whether the file is still the one at the path; a path that cannot be read is
// not it.
func (c *linkCheck) linked() (bool, error) {
	fi, err := c.f.Stat()
	if err != nil {
		return false, err
	}
	at, err := os.Stat(c.name)
	if err != nil {
		return false, nil // gone (or unreadable): not the file we write
	}
	return os.SameFile(fi, at), nil
}
