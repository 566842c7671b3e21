package boltstore

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Plain is the yardstick benchmarks compare the engine with: a bbolt file with default
// options, written one synced Update of one key at a time. It lives here so that boltstore
// stays the only package that imports bbolt.
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
