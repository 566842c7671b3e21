package boltstore

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// SearchFields names the search fields the search index holds values of (server's
// SearchFieldLister), in the index's order: one seek a field, whatever the number of runs.
func (s *Store) SearchFields() ([]string, error) {
	var out []string
	err := s.view("list search fields", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSearch)
		if b == nil {
			b = tx.Bucket(bucketSearchUnsorted) // its keys open with the field as well
		}
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil; {
			n, w := binary.Uvarint(k)
			if w <= 0 || uint64(len(k)-w) < n || n == 0 {
				return nil // damage: the caller reads the runs instead
			}
			field := k[w : w+int(n)]
			out = append(out, string(field))
			// Past every key of this field: its prefix with the last byte raised (a field's
			// bytes are [a-z0-9_], so the raise never carries).
			next := append([]byte(nil), k[:w+int(n)]...)
			next[len(next)-1]++
			k, _ = c.Seek(next)
		}
		return nil
	})
	return out, err
}
