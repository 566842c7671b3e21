//go:build !unix

package inputfile

import "os"

// open opens path; Windows has no FIFOs that block an open.
func open(path string) (*os.File, error) { return os.Open(path) }
