package main

import (
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Plain is the yardstick the benchmarks compare the engine with: a bbolt file with default
// options, written one synced Update of one key at a time. Besides boltstore, the bench is the
// only package that imports bbolt, for this.
type Plain struct {
	db *bolt.DB
	n  int
}

// OpenPlain creates or opens the yardstick file at path.
func OpenPlain(path string) (*Plain, error) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return nil, fmt.Errorf("plain update: %w", err)
	}
	return &Plain{db: db}, nil
}

// Update commits val under the next key in one synced transaction.
func (p *Plain) Update(val []byte) error {
	p.n++
	err := p.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		return b.Put(fmt.Appendf(nil, "%08d", p.n), val)
	})
	if err != nil {
		return fmt.Errorf("plain update: %w", err)
	}
	return nil
}

// Close closes the file.
func (p *Plain) Close() error { return p.db.Close() }

// PlainUpdate measures n plain Updates of size bytes each in a fresh file at path and returns
// their mean duration.
func PlainUpdate(path string, n, size int) (time.Duration, error) {
	p, err := OpenPlain(path)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	val := make([]byte, size)
	start := time.Now()
	for range n {
		if err := p.Update(val); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(n), nil
}

// PlainLog is the yardstick of a store with the write-ahead log: a file appended to and
// fdatasynced once per record, as the log does (on Linux; elsewhere fsynced, as the log is),
// with nothing else around it.
type PlainLog struct {
	f    *os.File
	size int64
}

// OpenPlainLog creates the yardstick log at path.
func OpenPlainLog(path string) (*PlainLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("plain log: %w", err)
	}
	return &PlainLog{f: f}, nil
}

// OpenPlainLogPreallocated creates the stricter yardstick: a file preallocated to size bytes (as
// the log's segments are) and synced, written from its start, each write synced, so no sync
// changes the file's size. Writes past size grow it, as appends do.
func OpenPlainLogPreallocated(path string, size int64) (*PlainLog, error) {
	p, err := OpenPlainLog(path)
	if err != nil {
		return nil, err
	}
	if err := preallocate(p.f, size); err != nil {
		p.f.Close()
		return nil, fmt.Errorf("plain log: %w", err)
	}
	if err := p.f.Sync(); err != nil {
		p.f.Close()
		return nil, fmt.Errorf("plain log: %w", err)
	}
	return p, nil
}

// Append writes val at the end of what was written and syncs it.
func (p *PlainLog) Append(val []byte) error {
	if _, err := p.f.WriteAt(val, p.size); err != nil {
		return fmt.Errorf("plain log: %w", err)
	}
	if err := fdatasync(p.f); err != nil {
		return fmt.Errorf("plain log: %w", err)
	}
	p.size += int64(len(val))
	return nil
}

// Close closes the file.
func (p *PlainLog) Close() error { return p.f.Close() }
