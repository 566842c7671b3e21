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

// fillChunk is what zeroFill writes and syncs at a time: a sync of the log waits behind at most
// this much of a spare's filling, not behind the whole segment.
const fillChunk = 1 << 20

// errFillStopped is a spare's filling stopped by close; the spare is removed.
var errFillStopped = errors.New("the log was closed")

// zeroFill writes size bytes of zeros to f, syncing each chunk, and stops between chunks once
// the log is closing. makeSpare syncs the file (its size) at the end.
func (l *wal) zeroFill(f *os.File, size int64) error {
	zeros := make([]byte, min(size, fillChunk))
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if l.closing.Load() {
			return errFillStopped
		}
		b := zeros[:min(int64(len(zeros)), size-off)]
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		if off+int64(len(b)) < size {
			if err := fdatasync(f); err != nil {
				return err
			}
		}
	}
	return nil
}
