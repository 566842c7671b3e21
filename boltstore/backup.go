package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// Backups (docs/design.md, "Backup and compaction"). A backup is bbolt's own copy of a
// committed state (Tx.WriteTo), taken in a read transaction begun after a checkpoint, so it
// holds every commit acknowledged before the backup began; it is written under a temporary
// name, made a closed database (no log id: it needs no log), synced and renamed into place.

// ErrBackupExists is returned by SaveBackup when the target exists and force is false.
var ErrBackupExists = errors.New("the file exists")

// testHookBackup, set only by tests, is called at each step of SaveBackup, so a crash test
// can kill the process exactly there.
var testHookBackup = func(step string) {}

// WriteBackup writes a consistent copy of the database to w and returns its length. It first
// checkpoints, so bbolt's file holds every commit acknowledged before the call, then copies
// bbolt's state in a read transaction begun after that checkpoint: commits go on meanwhile
// (a commit that must grow bbolt's map waits for the copy, as for any reader). size, when
// not nil, is called with the copy's length before its first byte is written. The copy
// still names the running log: SaveBackup makes it a database that opens without one.
func (s *Store) WriteBackup(w io.Writer, size func(int64)) (int64, error) {
	if f := s.Err(); f != nil {
		return 0, fmt.Errorf("backup: %w", f)
	}
	if s.closed.Load() {
		return 0, fmt.Errorf("backup: %w", history.ErrClosed)
	}
	if s.readOnly { // the file may lack the log's records, which only a checkpoint puts there
		return 0, fmt.Errorf("backup: %w", ErrReadOnly)
	}
	if err := s.settle(); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	var n int64
	err := guard(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			if size != nil {
				size(tx.Size())
			}
			var err error
			n, err = tx.WriteTo(w)
			return err
		})
	})
	if err != nil {
		return n, fmt.Errorf("backup: %w", err)
	}
	return n, nil
}

// SaveBackup writes a backup to path: write (Store.WriteBackup, or a copy received from the
// process holding the database) fills path+".tmp", which is synced, checked to be a wend
// database (every bucket read, as Open does), made one that opens without a log, and renamed
// to path, then the folder is synced. An existing path is refused with ErrBackupExists
// unless force. A failure or a crash leaves path as it was; a failure removes the temp file.
func SaveBackup(path string, force bool, write func(w io.Writer) (int64, error)) (int64, error) {
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return 0, fmt.Errorf("backup to %s: %w; give another path, or --force to replace it", path, ErrBackupExists)
		}
	}
	tmp := path + ".tmp"
	n, err := saveBackup(tmp, path, write)
	if err != nil {
		os.Remove(tmp)
		return n, fmt.Errorf("backup to %s: %w", path, err)
	}
	return n, nil
}

func saveBackup(tmp, path string, write func(w io.Writer) (int64, error)) (int64, error) {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := write(f)
	testHookBackup("written")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	if err := closeCopy(tmp); err != nil {
		return n, err
	}
	testHookBackup("closed")
	if err := os.Rename(tmp, path); err != nil {
		return n, err
	}
	testHookBackup("renamed")
	return n, syncDir(filepath.Dir(path))
}

// closeCopy makes the copy at path a closed database: every bucket is read (a copy damaged in
// transit fails here), its schema checked, and the running log's id deleted from both of
// bbolt's meta pages (two commits, as Close's metaTwice), so it opens without a log.
func closeCopy(path string) error {
	if err := walkReadOnly(path, Options{InitialMmapSize: DefaultInitialMmapSize}); err != nil {
		return fmt.Errorf("check the copy: %w", err)
	}
	db, err := bolt.Open(path, 0o600, boltOptions(Options{InitialMmapSize: DefaultInitialMmapSize}, false))
	if err != nil {
		return fmt.Errorf("open the copy: %w", err)
	}
	err = guard(func() error {
		if err := db.View(checkSchema); err != nil {
			return err
		}
		return forgetLog(db)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close the copy: %w", err)
	}
	return nil
}

// forgetLog deletes the id of a running log from a copy of the database, in two commits so
// that neither of bbolt's meta pages names it (as Close's metaTwice): the copy's state is
// whole in bbolt, and it opens as a closed database.
func forgetLog(db *bolt.DB) error {
	if err := db.Update(unmarkLog); err != nil {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		return meta.Put(keySchema, bytes.Clone(meta.Get(keySchema)))
	})
}
