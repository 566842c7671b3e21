package boltstore

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Compaction (docs/design.md, "Backup and compaction"). bbolt never shrinks its file: pages
// freed by deletes are reused, not returned. Compact rewrites the live data into a new file
// with bbolt's Compact and renames it over the database, holding the database's lock
// throughout, so no other process writes meanwhile.

// compactSuffix names the file a compaction builds beside the database.
const compactSuffix = ".compact.tmp"

// compactTxMax bounds the data of each of Compact's transactions (bbolt holds a transaction's
// dirty pages in memory until it commits).
const compactTxMax = 16 << 20

// testHookCompact, set only by tests, is called at each step of Compact, so a crash test can
// kill the process exactly there.
var testHookCompact = func(step string) {}

// CompactResult is what Compact did.
type CompactResult struct {
	Before, After int64 // the file's size in bytes
}

// Compact rewrites the database at path into a file holding only its live pages and renames
// that over it. It opens the database as Open does (a log a crash left is replayed first, and
// the database is then closed to its log: the new file needs none), so it fails with an
// *InUseError while another process holds the file. The new file is built in
// path+".compact.tmp", synced, read back whole (every bucket, as Open does), renamed into
// place and the folder synced: a failure or a crash at any point leaves path either the old
// database or the new one, each complete.
func Compact(path string, opts Options) (CompactResult, error) {
	var res CompactResult
	if err := refuseEmpty(path); err != nil {
		return res, fmt.Errorf("compact: %w", err)
	}
	// The rename must replace the database file, not a symlink to it.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	opts.NoLog = true // no log meanwhile: nothing commits, and bbolt's file is the whole state
	s, err := Open(path, opts)
	if err != nil {
		return res, fmt.Errorf("compact: %w", err)
	}
	defer s.Close()
	st, err := os.Stat(path)
	if err != nil {
		return res, fmt.Errorf("compact: %w", err)
	}
	res.Before = st.Size()
	tmp := path + compactSuffix
	os.Remove(tmp) // a crashed compaction's; we hold the lock, so no compaction is running
	if err := compactInto(tmp, s, opts); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("compact %s: %w", path, err)
	}
	if err := os.Chmod(tmp, st.Mode().Perm()); err != nil { // the operator's mode, not bbolt's 0600
		os.Remove(tmp)
		return res, fmt.Errorf("compact %s: %w", path, err)
	}
	testHookCompact("built")
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("compact %s: %w", path, err)
	}
	testHookCompact("renamed")
	if err := syncDir(filepath.Dir(path)); err != nil {
		return res, fmt.Errorf("compact %s: %w", path, err)
	}
	if st, err := os.Stat(path); err == nil {
		res.After = st.Size()
	}
	if err := s.Close(); err != nil {
		return res, fmt.Errorf("compact %s: %w", path, err)
	}
	return res, nil
}

// compactInto copies s's live data into a new bbolt file at tmp, synced, closed to any log
// (WEND_STORE_LOG=1 may have started one in front of s: its id must not be in the copy).
func compactInto(tmp string, s *Store, opts Options) error {
	if err := s.settle(); err != nil {
		return err
	}
	dst, err := bolt.Open(tmp, 0o600, boltOptions(opts, true))
	if err != nil {
		return err
	}
	err = guard(func() error {
		if err := bolt.Compact(dst, s.db, compactTxMax); err != nil {
			return err
		}
		return forgetLog(dst)
	})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// bbolt synced each of its commits; sync once more so nothing of the file is only cached.
	f, err := os.Open(tmp)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := walkReadOnly(tmp, opts); err != nil {
		return fmt.Errorf("check the compacted file: %w", err)
	}
	return nil
}
