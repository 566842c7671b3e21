package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// TestLogSegmentBlocksAreWritten: the blocks of a segment, the first of an Open and one made as
// the spare, are written, not unwritten extents that a record's sync would convert
// (walfill.go). Read with FIEMAP; a file that preallocate made shows what the check catches.
func TestLogSegmentBlocksAreWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x.wal")
	l, err := openWAL(dir, 1, 2*fillChunk+4096) // a partial last chunk too
	must(t, err)
	defer l.close()
	first := l.name
	for l.spare == nil || !l.full() {
		_, err := l.append(make([]byte, 8000))
		must(t, err)
	}
	_, err = l.roll()
	must(t, err)

	control, err := os.Create(filepath.Join(t.TempDir(), "fallocated"))
	must(t, err)
	defer control.Close()
	must(t, preallocate(control, 1<<20))
	unwritten, err := unwrittenBytes(control)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTTY) {
		t.Logf("this file system reports no block map (%v): only the sizes and zeros are checked elsewhere", err)
		return
	}
	must(t, err)
	t.Logf("a fallocated file: %d of %d bytes unwritten", unwritten, 1<<20)

	for _, name := range []string{first, l.name} {
		f, err := os.Open(name)
		must(t, err)
		n, err := unwrittenBytes(f)
		f.Close()
		must(t, err)
		if n != 0 {
			t.Errorf("segment %s: %d bytes in unwritten extents, want every block written", filepath.Base(name), n)
		}
	}
}

// unwrittenBytes sums the lengths of f's extents that FIEMAP flags unwritten.
func unwrittenBytes(f *os.File) (int64, error) {
	const (
		fsIocFiemap     = 0xC020660B // _IOWR('f', 11, struct fiemap)
		fiemapFlagSync  = 1
		extentUnwritten = 0x800
		extentLast      = 0x1
		maxExtents      = 64
	)
	type extent struct {
		Logical, Physical, Length uint64
		_                         [2]uint64
		Flags                     uint32
		_                         [3]uint32
	}
	var req struct {
		Start, Length           uint64
		Flags, Mapped, Count, _ uint32
		Extents                 [maxExtents]extent
	}
	var total int64
	for start := uint64(0); ; {
		req.Start, req.Length, req.Flags, req.Count = start, ^uint64(0)-start, fiemapFlagSync, maxExtents
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&req))); e != 0 {
			return 0, e
		}
		if req.Mapped == 0 {
			return total, nil
		}
		for _, x := range req.Extents[:req.Mapped] {
			if x.Flags&extentUnwritten != 0 {
				total += int64(x.Length)
			}
			if x.Flags&extentLast != 0 {
				return total, nil
			}
			start = x.Logical + x.Length
		}
	}
}
