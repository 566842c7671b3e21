package boltstore

import bolt "go.etcd.io/bbolt"

// dropMappedEveryRead is how many bytes of histories read pass between two drops: reads map
// pages in too, and a start's repair that reads every open run's history would otherwise
// leave the whole file resident (a var for tests).
var dropMappedEveryRead int64 = 64 << 20

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
	s.dropMapped()
}

// noteRead counts the bytes of a chunk of history read and drops the mapped pages every
// dropMappedEveryRead bytes. Its caller holds no transaction. One reader drops at a time; the
// others go on.
func (s *Store) noteRead(chunk []kv) {
	n := 0
	for _, e := range chunk {
		n += len(e.k) + len(e.v)
	}
	if s.readSinceDrop.Add(int64(n)) < dropMappedEveryRead || !s.dropMu.TryLock() {
		return
	}
	defer s.dropMu.Unlock()
	s.readSinceDrop.Store(0)
	s.dropMapped()
}

// dropMapped drops the mapped pages of the file, inside a read transaction.
func (s *Store) dropMapped() {
	_ = s.db.View(func(tx *bolt.Tx) error {
		// Inside a read transaction bbolt cannot remap (a remap waits for every reader), so
		// the range below stays this mapping of the file. tx.Size() is the high water mark of
		// the pages in use, never past the mapping's end.
		return dropPages(s.db.Info().Data, tx.Size())
	})
}
