package boltstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Recycling a checkpointed segment as the next spare, as PostgreSQL recycles WAL segments:
// its blocks are written already, so the spare costs a rename instead of a segment of zeros
// written and synced (walfill.go), and a busy log writes each byte once, not twice.
//
// The recycled file still holds its old records. They end the new segment's records as a
// stale record does (walread.go): every one has an LSN below the segment's first, so it is
// never the LSN due and never taken for a later record after damage.

// recycledName is the checkpointed segment kept for the next spare.
const recycledName = "recycled.spare"

// recycleLog is removeLog for a checkpoint: the newest of the segments it removes is renamed to
// recycledName instead (over one not yet reused), the rest are removed.
func recycleLog(dir string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	last := names[len(names)-1]
	if err := os.Rename(last, filepath.Join(dir, recycledName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("recycle log segment: %w", err)
	}
	return removeLog(dir, names[:len(names)-1])
}

// takeRecycled makes the spare from the recycled segment when there is one: renamed, filled
// with zeros up to size if it is shorter (the first segment of an Open) or cut to size if it
// is longer (a segment made for a large record), then synced: a segment has the size its name
// gives (wal.go). It returns nil, nil when there is none.
func (l *wal) takeRecycled(dir string, size int64) (*os.File, error) {
	name := filepath.Join(dir, spareName)
	err := os.Rename(filepath.Join(dir, recycledName), name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reuse log segment: %w", err)
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("reuse log segment: %w", err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case fi.Size() < size:
		err = l.zeroFillFrom(f, fi.Size(), size)
	case fi.Size() > size:
		err = f.Truncate(size)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(name)
		return nil, fmt.Errorf("reuse log segment %s: %w", name, err)
	}
	l.reused.Add(1)
	return f, nil
}
