package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// schemaVersion is the layout described in doc.go. A file of schema 1 (every run's events in
// a bucket of their own) is read as it is, and upgraded by a writing Open (upgrade.go).
const (
	schemaVersion = "2"
	schemaOwnOnly = "1"
)

// Bucket and key names.
var (
	bucketMeta      = []byte("meta")
	bucketRuns      = []byte("runs")
	bucketEvents    = []byte("events")     // a bucket of its own for each run with a long history
	bucketRunEvents = []byte("run_events") // every other run's events, packed (events.go)
	bucketRunSlots  = []byte("run_slots")  // run id -> its slot in run_events
	bucketTasks     = []byte("tasks")
	bucketWorkflows = []byte("workflows")
	keySchema       = []byte("schema")

	allBuckets = [][]byte{bucketMeta, bucketRuns, bucketEvents, bucketRunEvents, bucketRunSlots, bucketTasks, bucketWorkflows}
)

// creatingSuffix marks the temp file a new database is built in.
const creatingSuffix = ".creating-"

// testHookCreate, set only by tests, is called at each step of createIfMissing, so a crash test
// can kill the process exactly there.
var testHookCreate = func(step string) {}

// createIfMissing makes a new, initialised database at path unless a file is already there.
// Its caller holds the creation lock (createOrClean).
// bbolt initialises a new file in place (meta pages, then fsync), so a crash during that write
// can leave a file that will not open (etcd#16596). Instead the database is built in a temp file
// in the same folder, synced, hard-linked to path (which, unlike rename, never replaces a file
// another process just created) and the folder synced, so path holds either nothing or a
// complete database.
func createIfMissing(path string, opts Options) error {
	if _, err := os.Lstat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err // exists (nil), or cannot tell
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, base+creatingSuffix+"*")
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	testHookCreate("temp created")
	// CreateTemp made an empty 0600 file; bbolt initialises an empty file as new.
	if err := initFile(tmp, opts); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	testHookCreate("temp initialised")
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil // another process created it first; open theirs
		}
		return fmt.Errorf("create database: %w", err)
	}
	testHookCreate("linked")
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	testHookCreate("folder synced")
	return nil
}

// initFile writes the buckets and schema version into a new database file and syncs it.
func initFile(path string, opts Options) error {
	db, err := bolt.Open(path, 0o600, boltOptions(opts, true))
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if err := buildReadIndexes(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, []byte(schemaVersion))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// bbolt fsynced its commit; syncing once more covers the file size set at init.
	return syncFile(path)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a new directory entry durable.
func syncDir(dir string) error {
	if err := syncFolder(dir); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// createOrClean creates the database unless it exists and removes the temp files of
// creations that crashed, holding the creation lock throughout (createlock.go): no other
// process is then mid-way through a creation, so every temp file found is a dead one's.
func createOrClean(path string, opts Options) error {
	release, err := lockCreation(path)
	if err != nil {
		return err
	}
	defer release()
	if err := createIfMissing(path, opts); err != nil {
		return err
	}
	removeCreationLeftovers(path)
	return nil
}

// removeCreationLeftovers deletes temp files of creations that crashed. Call it only while
// holding the creation lock, which every creator holds while its temp file exists.
func removeCreationLeftovers(path string) {
	leftovers, _ := filepath.Glob(globEscape(path) + creatingSuffix + "*")
	for _, l := range leftovers {
		os.Remove(l)
	}
}

// globEscape quotes the glob metacharacters of a literal path.
func globEscape(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(p)
}

// checkSchema verifies the file is a wend database this code can read.
// A file of schema 1 has no shared events bucket, nor its slots.
func checkSchema(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return fmt.Errorf("bucket %q missing: %w", bucketMeta, ErrNotWend)
	}
	v := string(meta.Get(keySchema))
	if v != schemaVersion && v != schemaOwnOnly {
		return fmt.Errorf("schema version %q, this wend reads %q and %q: %w", v, schemaOwnOnly, schemaVersion, ErrNotWend)
	}
	for _, b := range allBuckets {
		if tx.Bucket(b) == nil && (v == schemaVersion || !bytes.Equal(b, bucketRunEvents) && !bytes.Equal(b, bucketRunSlots)) {
			return fmt.Errorf("bucket %q missing: %w", b, ErrNotWend)
		}
	}
	return nil
}
