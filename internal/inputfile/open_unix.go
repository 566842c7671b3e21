//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// open opens path without blocking: opening a FIFO for reading waits for a writer unless
// O_NONBLOCK is set, and Read refuses it by its mode right after.
func open(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
