//go:build linux && !wend_portable

package boltstore

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fillDirect writes zeros from offset from to size of the file at name, a chunk a write, through
// a descriptor of its own opened with O_DIRECT; from and size are multiples of fillWrite. It
// reports done false, having written nothing, when the file system refuses direct I/O (the
// caller then fills through the cache); once it has written, its error is the fill's.
func (l *wal) fillDirect(name string, from, size int64) (done bool, err error) {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	zeros := directZeros()
	for off := from; off < size; {
		if l.closing.Load() {
			return true, errFillStopped
		}
		n := min(int64(len(zeros)), size-off)
		w, err := unix.Pwrite(fd, zeros[:n], off)
		if errors.Is(err, unix.EINVAL) && off == from {
			return false, nil // opened, but direct writes refused
		}
		if err == nil && int64(w) != n {
			err = fmt.Errorf("wrote %d of %d bytes", w, n) // a short direct write: the disk is full
		}
		if err != nil {
			return true, &os.PathError{Op: "write", Path: name, Err: err}
		}
		off += n
	}
	return true, nil
}

// directZeros is a chunk of zeros at an address aligned to fillWrite, as direct I/O asks; made
// once, only ever read, and shared by every log's fillings.
var directZeros = sync.OnceValue(func() []byte {
	b := make([]byte, fillChunk+fillWrite)
	skip := (fillWrite - int(uintptr(unsafe.Pointer(&b[0]))%fillWrite)) % fillWrite
	return b[skip : skip+fillChunk : skip+fillChunk]
})
