package boltstore

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bbolt's transaction kept open across batches (docs/design.md, "bbolt commits in groups").
//
// Between checkpoints a batch is durable once its log record is synced: bbolt's commit adds
// nothing a crash could keep, since recovery starts from the checkpoint and replays the log. So
// the writer may leave bbolt's write transaction open after answering a batch and apply the
// next batches into it, committing it once for several: a sequential step then pays for its
// record's write and sync, and only a share of bbolt's page writes and commit.
//
// Readers see bbolt's committed state, so whatever was answered must be committed before a
// read: every read settles first (commits the open transaction, waiting for a batch under way).
// And a writer that has seen reads since its last batch commits at once, so that a store being
// read (a UI, a list) keeps the old cost: one bbolt commit a batch, no reader waiting.
//
// The open transaction is committed before anything else needs bbolt's committed state or
// its write lock: a checkpoint's pin (rollLog), PutScheduleStates, Close. It holds at most
// openBatchesMax batches and openBytesMax bytes of records; synced commits (no log, or the
// synced mode near the end of the mmap) never leave it open.

// openBatchesMax (a Store's openMax, which tests may lower) and openBytesMax bound what the open
// transaction holds: bbolt keeps its dirty pages in memory until it commits.
const (
	openBatchesMax = 32
	openBytesMax   = 1 << 20
)

// openTx is the writer's transaction left open, with what is needed to redo it. writeMu guards
// it; settle reads Store.hasOpen instead, without the lock.
type openTx struct {
	tx      *bolt.Tx
	ps      []*prepared // the commits applied in tx, in order, for redo
	lsn     uint64      // the last log record tx holds
	batches int
	bytes   int    // the records' payload bytes
	reads   uint64 // s.reads when the writer last decided
}

// beginWrite returns the open transaction, or a new one.
func (s *Store) beginWrite() (tx *bolt.Tx, reused bool, err error) {
	if s.open.tx != nil {
		return s.open.tx, true, nil
	}
	tx, err = s.db.Begin(true)
	return tx, false, err
}

// keepOpen decides, once a batch's record (LSN lsn, n payload bytes) is written and before its
// sync, whether tx stays open after the answer; if so, it records the batch's accepted commits
// as the open transaction's and returns true.
func (s *Store) keepOpen(tx *bolt.Tx, batch []*request, results []error, lsn uint64, n int) bool {
	reads := s.reads.Load()
	read := reads != s.open.reads
	s.open.reads = reads
	o := &s.open
	if read || s.log == nil || !s.db.NoSync || o.batches+1 >= s.openMax || o.bytes+n >= openBytesMax {
		return false
	}
	o.tx, o.lsn = tx, lsn
	for i, r := range batch {
		if results[i] == nil {
			o.ps = append(o.ps, r.p)
		}
	}
	o.batches++
	o.bytes += n
	s.hasOpen.Store(true) // before the answer: a read after it must settle
	return true
}

// committed forgets the open transaction once the transaction holding it has been committed or
// rolled back: not before, or a read that found none open could miss what bbolt is still
// committing.
func (s *Store) committed() {
	clear(s.open.ps)
	s.open = openTx{ps: s.open.ps[:0], reads: s.open.reads}
	s.hasOpen.Store(false)
}

// commitOpen commits the open transaction, if any; writeMu is held. A failed commit stops the
// store; what the transaction held is in the log, which the next Open replays.
func (s *Store) commitOpen() error {
	if s.open.tx == nil {
		return nil
	}
	err := s.commitTx(s.open.tx)
	s.committed()
	if err != nil {
		s.setFatal(err)
		return s.Err()
	}
	s.boltTxs.Add(1)
	return nil
}

// dropOpen rolls the open transaction back, after the store failed; writeMu is held.
func (s *Store) dropOpen() {
	if s.open.tx != nil {
		_ = guard(s.open.tx.Rollback)
		s.committed()
	}
}

// redoOpen rolls tx back after a commit's apply failed in it and, when tx was the open
// transaction, applies the batches it held again into a new one, left open: they were answered,
// and bbolt must still get them. A redo that fails stops the store.
func (s *Store) redoOpen(tx *bolt.Tx, reused bool) {
	tx.Rollback()
	if !reused {
		return
	}
	o := s.open
	s.open.tx = nil
	nt, err := s.db.Begin(true)
	if err == nil {
		err = reapply(nt, o.ps, o.lsn)
		if err != nil {
			nt.Rollback()
		}
	}
	if err != nil {
		s.committed()
		s.setFatal(fmt.Errorf("apply again the commits answered since bbolt's last commit: %w", err))
		return
	}
	s.open.tx = nt
}

// reapply applies answered commits into tx, with the LSN of the last record holding them.
func reapply(tx *bolt.Tx, ps []*prepared, lsn uint64) error {
	for _, p := range ps {
		if err := apply(tx, p); err != nil {
			return err
		}
	}
	return putLogLSN(tx, lsn)
}

// settle makes every answered commit visible to a read: it commits the open transaction, after
// the batch under way if there is one. It must not be called inside a read transaction (a
// commit that remaps waits for every reader) nor with writeMu held.
func (s *Store) settle() error {
	s.reads.Add(1)
	if !s.hasOpen.Load() {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.commitOpen()
}
