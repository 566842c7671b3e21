//go:build linux && !wend_portable

package boltstore

import (
	"os"

	"golang.org/x/sys/unix"
)

// writeback starts writing f's dirty pages in [off, off+n) to the device and returns without
// waiting; it makes nothing durable (an fdatasync still must), and an error only means the
// fdatasync does all of the work, so it is ignored.
func writeback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
