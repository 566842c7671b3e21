package boltstore

import bolt "go.etcd.io/bbolt"

// dropMappedEvery is how many write transactions pass between two drops of bbolt's mapped
// pages (dropMapped). Each transaction touches the pages at the right edge of the buckets it
// appends to, and every page of an append-only history is that edge once, so without the drops
// the process's resident set grows with the file: a 1,000,000-item sharded for_each left
// about 480 MB of its 546 MB file resident (docs/performance.md, "for_each past the history
// limit").
const dropMappedEvery = 1024

// maybeDropMapped drops the mapped pages every dropMappedEvery transactions. The caller holds
// writeMu, so no write transaction (the only place bbolt remaps) runs meanwhile.
func (s *Store) maybeDropMapped() {
	if s.txs.Load()-s.droppedAt < dropMappedEvery {
		return
	}
	s.droppedAt = s.txs.Load()
	_ = s.db.View(func(tx *bolt.Tx) error {
		// Inside a read transaction bbolt cannot remap (a remap waits for every reader), so
		// the range below stays this mapping of the file. tx.Size() is the high water mark of
		// the pages in use, never past the mapping's end.
		return dropPages(s.db.Info().Data, tx.Size())
	})
}
