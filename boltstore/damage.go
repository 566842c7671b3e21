package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// guard runs fn with a panic, or a fault on the mmap, turned into an error wrapping ErrDamaged:
// on some damaged pages bbolt asserts instead of returning an error. Only the calling goroutine
// is covered; a goroutine bbolt starts itself is not (see openChecked).
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (bbolt: %v)", ErrDamaged, r)
		}
	}()
	return fn()
}

// openChecked opens the file for writing with bbolt, after reading its pages where a damaged
// one cannot take the process down.
//
// With NoFreelistSync, bbolt's Open rebuilds the freelist by walking every page of the tree in
// a goroutine of its own. A page failing bbolt's assertions there (a torn write leaves a page
// whose header names another page, or no page type) panics in that goroutine, which nothing can
// recover: the process dies. So the file is first opened read-only, which does not walk, and
// every bucket is read here under guard (walkTree); only then is it opened for writing.
// Problems only bbolt's walk finds (a leaf's keys outside its parent's range, a page referenced
// twice) come back to Open's own goroutine as a panic, which guard turns into ErrDamaged. bbolt's
// handle is lost with it: its lock is released and its file closed here, but its walker
// goroutine stays blocked and its mmap mapped (the walker may still be reading it). A process
// whose database fails to open is expected to exit.
func openChecked(path string, opts Options) (*bolt.DB, error) {
	if err := walkReadOnly(path, opts); err != nil {
		return nil, err
	}
	o := boltOptions(opts, false)
	var f *os.File
	open := o.OpenFile
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		var err error
		f, err = open(name, flag, perm)
		return f, err
	}
	var db *bolt.DB
	err := guard(func() (err error) {
		db, err = bolt.Open(path, 0o600, o)
		return err
	})
	if errors.Is(err, ErrDamaged) && f != nil {
		unlock(f) // the mmap holds the open file, and with it the lock, after Close
		f.Close()
	}
	if err == nil && replaced(path, f) {
		db.Close()
		return nil, errReplaced
	}
	return db, err
}

// errReplaced is openChecked's error when the file it locked is no longer the one at path: a
// compaction renamed its new file over the database while this Open waited for the lock.
var errReplaced = errors.New("database file replaced while opening")

// replaced reports whether path no longer names the file f (Compact's rename).
func replaced(path string, f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(path)
	return err == nil && !os.SameFile(fi, pi)
}

// walkReadOnly opens the file read-only and reads every bucket under guard.
func walkReadOnly(path string, opts Options) error {
	o := boltOptions(opts, false)
	o.ReadOnly = true
	var db *bolt.DB
	err := guard(func() (err error) {
		db, err = bolt.Open(path, 0o600, o)
		return err
	})
	if err != nil {
		return err
	}
	defer db.Close()
	return guard(func() error { return db.View(walkTree) })
}

// walkTree reads every key of every bucket, inline buckets included (bbolt's own walks skip
// those), and checks each bucket's keys ascend.
func walkTree(tx *bolt.Tx) error {
	return walkBucket(tx.Cursor(), tx.Bucket, nil)
}

// walkBucket reads the keys of one bucket and of the buckets in it. A panic of bbolt's on a page
// of the bucket (not of one inside it) becomes an error naming the bucket; a fault on the mmap
// becomes one too, when the caller's guard has made faults panic.
func walkBucket(c *bolt.Cursor, sub func([]byte) *bolt.Bucket, path []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bucket %q: %w (bbolt: %v)", path, ErrDamaged, r)
		}
	}()
	var prev []byte
	// Seek, not First: Seek checks the type of an inline bucket's page, where First, finding
	// no type on a zeroed one, takes it for a branch pointing at itself and loops for ever.
	for k, v := c.Seek(nil); k != nil; k, v = c.Next() {
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("bucket %q: key %x after %x: %w", path, k, prev, ErrDamaged)
		}
		prev = k
		if v != nil {
			continue
		}
		if len(path) >= maxBucketDepth {
			// A bucket page pointing back at one of its ancestors (a torn or lost write left
			// it) would recurse until the stack overflows, which no recover catches.
			return fmt.Errorf("bucket %q: a bucket nested %d deep: %w", path, len(path)+1, ErrDamaged)
		}
		if b := sub(k); b != nil {
			if err := walkBucket(b.Cursor(), b.Bucket, append(path, string(k))); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxBucketDepth bounds the nesting walkBucket follows: wend's buckets nest two deep (events,
// then a run's events), so anything past a few levels is damage.
const maxBucketDepth = 4

// forEach calls fn on every key of b in order, as b.ForEach does, but starts with Seek: on a
// zeroed inline bucket page, ForEach (First) loops for ever, allocating as it goes (walkBucket).
// A damaged page makes it panic instead, which a read's guard turns into ErrDamaged.
func forEach(b *bolt.Bucket, fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(nil); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// afterSeqKeys sorts after every seq key (8 bytes).
var afterSeqKeys = bytes.Repeat([]byte{0xff}, 9)

// lastKey returns the last key of an events bucket, as b.Cursor().Last() does. It seeks past
// every key and steps back: Seek checks the type of each page on its way down, where Last, on a
// zeroed inline bucket page, reads a branch element about 1 MiB past the page and follows it (a
// fault, a panic, or, where zeros lie there, First's loop). A key at or after afterSeqKeys is
// no seq key: it is returned, for keySeq to reject.
func lastKey(b *bolt.Bucket) []byte {
	k, _ := lastKV(b)
	return k
}

// lastKV is lastKey with the key's value.
func lastKV(b *bolt.Bucket) (k, v []byte) {
	c := b.Cursor()
	if k, v := c.Seek(afterSeqKeys); k != nil {
		return k, v
	}
	return c.Prev()
}
