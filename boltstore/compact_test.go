package boltstore

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// withFreedPages writes a bucket of size bytes into the closed database at path, then deletes
// it: bbolt keeps the file's size and reuses the pages, so the file holds that much free space.
func withFreedPages(t *testing.T, path string, size int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	defer db.Close()
	must(t, db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("scratch"))
		if err != nil {
			return err
		}
		v := make([]byte, 64<<10)
		for i := 0; i*len(v) < size; i++ {
			if err := b.Put([]byte{byte(i >> 8), byte(i)}, v); err != nil {
				return err
			}
		}
		return nil
	}))
	must(t, db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("scratch")) }))
}

// TestCompactShrinks: a database with freed pages compacts smaller, opens, checks clean and
// holds the same runs and events; the temp file is gone.
func TestCompactShrinks(t *testing.T) {
	for _, log := range []string{"", "0", "1"} { // WEND_STORE_LOG: 1 forces a log on Compact's store
		t.Run("WEND_STORE_LOG="+log, func(t *testing.T) {
			t.Setenv(logFromEnv, log)
			compactShrinks(t)
		})
	}
}

func compactShrinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	ref := filepath.Join(dir, "ref.db")
	s := openAt(t, path, Options{})
	ids := commitRuns(t, s, "r", 30, 4, 1000)
	must(t, s.Close())
	must(t, os.Chmod(path, 0o640))
	withFreedPages(t, path, 8<<20)
	_, err := SaveBackup(ref, false, func(w io.Writer) (int64, error) { // the runs as they were
		s := openAt(t, path, Options{})
		defer s.Close()
		return s.WriteBackup(w, nil)
	})
	must(t, err)

	res, err := Compact(path, Options{})
	must(t, err)
	if res.After >= res.Before || res.Before < 8<<20 {
		t.Fatalf("compact: %d -> %d bytes, want smaller than 8 MiB of freed pages", res.Before, res.After)
	}
	if _, err := os.Stat(path + compactSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp file left: %v", err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("compacted file's mode: %v %v, want 0640 as before", st.Mode(), err)
	}
	if _, err := os.Stat(walDir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("log folder left: %v", err)
	}
	c := openAt(t, path, Options{NoLog: true})
	checkClean(t, c)
	sameRuns(t, openAt(t, ref, Options{}), c, ids)
	t.Logf("compact: %d -> %d bytes", res.Before, res.After)
}

// TestCompactRefusesHeld: a database another holder has open is not compacted.
func TestCompactRefusesHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	commitRuns(t, s, "r", 1, 0, 0)
	_, err := Compact(path, Options{})
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("compact of a held database: %v, want an InUseError naming pid %d", err, os.Getpid())
	}
}

// TestReplacedFileIsNoticed: the file an Open locked is told apart from a file renamed over
// its path meanwhile (a compaction's), so Open reopens rather than write the unlinked file.
func TestReplacedFileIsNoticed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	must(t, os.WriteFile(path, []byte("old"), 0o600))
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	if replaced(path, f) {
		t.Fatal("the file itself reported replaced")
	}
	must(t, os.WriteFile(path+".new", []byte("new"), 0o600))
	must(t, os.Rename(path+".new", path))
	if !replaced(path, f) {
		t.Fatal("a file renamed over the path not noticed")
	}
}

// TestCompactThroughSymlink: compacting through a symlink compacts the file it names and
// leaves the symlink.
func TestCompactThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	link := filepath.Join(dir, "link.db")
	s := openAt(t, path, Options{})
	commitRuns(t, s, "r", 3, 1, 10)
	must(t, s.Close())
	must(t, os.Symlink("wend.db", link))
	_, err := Compact(link, Options{})
	must(t, err)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	c := openAt(t, link, Options{})
	checkClean(t, c)
	if _, err := c.Run("r2"); err != nil {
		t.Fatal(err)
	}
}
