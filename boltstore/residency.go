package boltstore

import bolt "go.etcd.io/bbolt"

// dropMappedEveryRead is how much of the map reads may have brought in (mapCharge) between two
// looks at the process's file-backed resident set: reads map pages in too, and a start that
// reads every open run would otherwise leave the whole file resident (a var for tests).
var dropMappedEveryRead int64 = 16 << 20

// mappedBudget is the file-backed resident set (the map, and the binary's own pages) past which
// a look drops the map's pages (a var for tests). Reads charged by what they could map in
// dropped far more often than the pages called for: the 100,000 timers' firing, whose 1,024
// runs in flight read and write the same few MB, spent seconds of CPU refaulting the pages each
// drop took from under it (docs/performance.md, "Waiting runs").
var mappedBudget int64 = 128 << 20

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

// noteRead charges n bytes of the map read inside tx and, once dropMappedEveryRead bytes have
// been charged since the last look, drops the mapped pages if the file-backed resident set has
// passed mappedBudget, from inside tx: bbolt cannot
// remap while a read transaction is open, so the range stays this mapping of the file, and the
// pages already read stay valid (a later access faults them back from the page cache). Every
// read of many records charges here, not only history reads: Resume's scan of the runs touches
// each open run's events bucket for its last seq, and left the whole file of 100,000 waiting
// runs resident before any history was read. A scan (Runs, Tasks) is charged once, at its end:
// the drops in its middle doubled the CPU of a start over 100,000 waiting runs. One reader
// drops at a time; the others go on.
func (s *Store) noteRead(tx *bolt.Tx, n int) {
	if s.readSinceDrop.Add(int64(n)) < dropMappedEveryRead || !s.dropMu.TryLock() {
		return
	}
	defer s.dropMu.Unlock()
	s.readSinceDrop.Store(0)
	if rss := fileBackedRSS(); rss >= 0 && rss < mappedBudget {
		return
	}
	testHookReadDrop()
	_ = dropPages(s.db.Info().Data, tx.Size())
}

// testHookReadDrop, set only by tests, is called at each drop noteRead makes.
var testHookReadDrop = func() {}

// faultAround is what the kernel maps in around a faulted page of a file mapping when the
// pages next to it are in the page cache (fault_around_bytes, 64 KB by default): a read that
// touches one 4 KB page of the map can leave sixteen resident.
const faultAround = 64 << 10

// mapCharge is what noteRead is charged for a read of bytes stored in a bucket's leaves after
// seeks jumps to another part of the file (a seek in a run's events bucket faults in a page away
// from the last one read): each page faulted can bring faultAround of the map with it, and
// records read one after another sit on leaf pages scattered through the file, bbolt allocating
// pages as the commits come. A seek costs at least one window, the bytes after it their pages'
// windows: a short history, on one leaf, costs one. Charged by bytes read, Resume's scan of the
// open runs (a short last event each) left most of the file resident (docs/performance.md).
func mapCharge(bytes, seeks int) int {
	return max(bytes*(faultAround/4096), seeks*faultAround)
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
