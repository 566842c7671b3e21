package boltstore

import (
	"errors"
	"os"
)

// A log segment is filled with zeros that are written, not only allocated. With fallocate the
// blocks are reserved but unwritten, and the first write into each block converts its extent to
// written at the fdatasync: a change to the file's block map, which that sync must write too.
// A step's record starts a new block at a good share of the syncs, and on ext4 without a
// journal each such sync also wrote the inode's block and took markedly longer
// (docs/performance.md, "The log's step and the file system"). Written zeros need no
// conversion, so a record's sync writes its data and the flush. PostgreSQL zero-fills new WAL
// segments for the same reason (wal_init_zero).

// fillChunk is what zeroFill writes between syncs, or in one direct write: a sync of the log
// waits behind at most this much of a spare's filling, not behind the whole segment.
const fillChunk = 1 << 20

// fillWrite is the size of each write of zeros through the cache: one page. The page cache keeps a buffered
// write in a folio as large as the write (ext4's large folios), and a folio is dirtied and
// written back whole: zeros written a megabyte at a time made every later record's sync write
// a megabyte (docs/performance.md, "The log's step and the file system";
// TestLogAppendWritesItsPagesOnly).
const fillWrite = 4096

// errFillStopped is a spare's filling stopped by close; the spare is removed.
var errFillStopped = errors.New("the log was closed")

// zeroFill writes size bytes of zeros to f, a chunk at a time, and stops between chunks once
// the log is closing. makeSpare syncs the file (its size) at the end.
func (l *wal) zeroFill(f *os.File, size int64) error { return l.zeroFillFrom(f, 0, size) }

// zeroFillFrom is zeroFill of the bytes from offset from to size. Where the file system takes
// direct I/O (fillDirect), the zeros go straight to the device, a chunk a write: no page of the
// cache is filled, dirtied and written back a page at a time, which cost most of a spare's CPU
// (docs/performance.md, "The log's step and the file system"). Each write returns once the
// device has its chunk, so a log sync still waits behind at most one chunk. The cache then
// holds no page of the segment; a record's write covers its pages to their end (wal.put), so
// none is read from the device first. Elsewhere the zeros are written through the cache a
// page a write, and each chunk synced.
func (l *wal) zeroFillFrom(f *os.File, from, size int64) error {
	if from%fillWrite == 0 && size%fillWrite == 0 {
		if done, err := l.fillDirect(f.Name(), from, size); done {
			return err
		}
	}
	zeros := make([]byte, fillWrite)
	for off := from; off < size; {
		if l.closing.Load() {
			return errFillStopped
		}
		end := min(off+fillChunk, size)
		for ; off < end; off += int64(len(zeros)) {
			if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), end-off)], off); err != nil {
				return err
			}
		}
		if end < size {
			if err := fdatasync(f); err != nil {
				return err
			}
		}
	}
	return nil
}
