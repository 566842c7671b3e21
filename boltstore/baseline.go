package boltstore

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// PlainUpdate measures the yardstick benchmarks compare the engine with: n synced bbolt
// Updates of size bytes each, one key per Update, in a fresh file at path. It lives here so
// that boltstore stays the only package that imports bbolt. It returns the mean duration.
func PlainUpdate(path string, n, size int) (time.Duration, error) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return 0, fmt.Errorf("plain update: %w", err)
	}
	defer db.Close()
	val := make([]byte, size)
	start := time.Now()
	for i := range n {
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put(fmt.Appendf(nil, "%08d", i), val)
		})
		if err != nil {
			return 0, fmt.Errorf("plain update: %w", err)
		}
	}
	return time.Since(start) / time.Duration(n), nil
}
