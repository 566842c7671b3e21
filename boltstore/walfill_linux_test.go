//go:build linux && !wend_portable

package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	for l.spare == nil || l.fits(8000) {
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

// TestLogAppendWritesItsPagesOnly: an append of a 1.6 KB record, synced, writes about the pages
// it touches, not the folio the segment's filling left: zeros written a megabyte at a time
// made each record's sync write a megabyte (walfill.go, fillWrite). Counted by the process's
// write_bytes, which also counts the folder's and inode's writes, so the bound is loose.
func TestLogAppendWritesItsPagesOnly(t *testing.T) {
	l, err := openWAL(filepath.Join(t.TempDir(), "x.wal"), 1, DefaultLogSegmentSize)
	must(t, err)
	defer l.close()
	rec := make([]byte, 1600)
	before := processWriteBytes(t)
	const n = 200 // 320 KB: under half the first segment, so no spare is filled meanwhile
	for range n {
		_, err := l.append(rec)
		must(t, err)
	}
	if l.spare != nil {
		t.Fatalf("a spare started; the count would include its filling")
	}
	per := (processWriteBytes(t) - before) / n
	t.Logf("%d bytes written per append of a %d-byte record", per, len(rec))
	if per > 32<<10 {
		t.Fatalf("%d bytes written per append of a %d-byte record, want a few pages", per, len(rec))
	}
}

// TestLogAppendReadsNothing: a segment filled with direct writes leaves no page of it in the
// cache, and an append into a page not cached must not make the kernel read that page from the
// device to keep the bytes it does not write: each record's write goes on in zeros to the end
// of its page (wal.put). Counted by the process's read_bytes; without the zeros, 200 records
// of 1.6 KB read about 80 pages.
func TestLogAppendReadsNothing(t *testing.T) {
	l, err := openWAL(filepath.Join(t.TempDir(), "x.wal"), 1, DefaultLogSegmentSize)
	must(t, err)
	defer l.close()
	rec := make([]byte, 1600)
	before := processIO(t, "read_bytes")
	for range 200 { // under half the first segment: no spare is filled meanwhile
		_, err := l.append(rec)
		must(t, err)
	}
	if read := processIO(t, "read_bytes") - before; read > 32<<10 {
		t.Fatalf("200 appends read %d bytes from the device, want none of the segment's pages", read)
	}
}

// processWriteBytes is /proc/self/io's write_bytes: what this process caused to be written.
func processWriteBytes(t *testing.T) int64 {
	t.Helper()
	return processIO(t, "write_bytes")
}

// processIO is a counter of /proc/self/io.
func processIO(t *testing.T, name string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	must(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			must(t, err)
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/io:\n%s", name, b)
	return 0
}
