package boltstore

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bbolt's transaction kept open across batches (docs/design.md, "One sync per commit").
//
// With the log, a batch is durable once its log record is synced: the writer applies it into
// bbolt's write transaction and leaves that open, committing it (synced, by bbolt) only at the
// next checkpoint (checkpoint.go). A step thus pays for its record's write and sync, and only a
// share of bbolt's page writes and commit.
//
// A read must see every answered commit, and bbolt's read transactions see only its committed
// state: so while a transaction is open, reads run inside it, under writeMu, between two
// batches (view, read.go). bbolt's write transaction sees its own writes through its public
// API (Bucket, Get, Cursor): it is the buffer of the batches applied since the checkpoint,
// merged over the file by bbolt itself.
//
// The open transaction holds at most openBatchesMax batches and openBytesMax bytes of records
// (bbolt keeps its dirty pages in memory until it commits); then, or when the log segment is
// full, the writer checkpoints. Without the log every batch is bbolt's synced commit.

// openBatchesMax (a Store's openMax, which tests may lower) and openBytesMax bound what the open
// transaction holds, and so the log replayed after a crash.
const (
	openBatchesMax = 1024
	openBytesMax   = 2 << 20
)

// openTx is the writer's transaction left open, with what is needed to redo it. writeMu guards
// it; view reads Store.hasOpen first, without the lock.
type openTx struct {
	tx      *bolt.Tx
	ps      []*prepared // the commits applied in tx, in order, for redo
	lsn     uint64      // the last log record tx holds
	batches int
	bytes   int // the records' payload bytes
	// kept are the writes of readers' kept data (kept.go) made in tx, written again after a
	// redo: they are in no log record.
	kept []func(*bolt.Tx) error
}

// beginWrite returns the open transaction, or a new one.
func (s *Store) beginWrite() (tx *bolt.Tx, reused bool, err error) {
	if s.open.tx != nil {
		return s.open.tx, true, nil
	}
	tx, err = s.db.Begin(true)
	return tx, false, err
}

// keepOpen records a batch's accepted commits, whose record (LSN lsn, n payload bytes) is
// written, as the open transaction's, before the record's sync and the answer.
func (s *Store) keepOpen(tx *bolt.Tx, batch []*request, results []error, lsn uint64, n int) {
	o := &s.open
	o.tx, o.lsn = tx, lsn
	for i, r := range batch {
		if results[i] == nil {
			o.ps = append(o.ps, r.p)
		}
	}
	o.batches++
	o.bytes += n
	s.hasOpen.Store(true) // before the answer: a read after it must read inside tx
}

// openFull reports whether the open transaction holds as much as it may: a checkpoint is due.
func (s *Store) openFull() bool {
	return s.open.tx != nil && (s.open.batches >= s.openMax || s.open.bytes >= openBytesMax)
}

// committed forgets the open transaction once the transaction holding it has been committed or
// rolled back: not before, or a read that found none open could miss what bbolt is still
// committing.
func (s *Store) committed() {
	clear(s.open.ps)
	s.open = openTx{ps: s.open.ps[:0]}
	s.hasOpen.Store(false)
}

// commitOpen commits the open transaction, if any, synced by bbolt, with the LSN of the last
// log record it holds (keyLogLSN): written once, here, rather than by every batch, as nothing
// reads it before the transaction is committed. writeMu is held. A failed commit stops the
// store; what the transaction held is in the log, which the next Open replays.
func (s *Store) commitOpen() error {
	if s.open.tx == nil {
		return nil
	}
	err := putLogLSN(s.open.tx, s.open.lsn)
	if err == nil {
		err = s.commitTx(s.open.tx)
	} else {
		s.open.tx.Rollback()
	}
	s.committed()
	if err != nil {
		s.setFatal(err)
		return s.Err()
	}
	testHookSync()
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
		err = reapply(nt, o.ps)
		if err != nil {
			nt.Rollback()
		}
	}
	if err != nil {
		s.committed()
		s.setFatal(fmt.Errorf("apply again the commits answered since the last checkpoint: %w", err))
		return
	}
	s.open.tx = nt
	s.open.kept = rekeep(nt, o.kept)
}

// reapply applies answered commits into tx; the LSN of the last record holding them is
// written when tx is committed (commitOpen).
func reapply(tx *bolt.Tx, ps []*prepared) error {
	for _, p := range ps {
		if err := apply(tx, p); err != nil {
			return err
		}
	}
	return nil
}

// rekeep writes the readers' kept data again into a redone open transaction; what fails is
// dropped (the reader's position then stays where the file has it, and it reads from there).
func rekeep(tx *bolt.Tx, kept []func(*bolt.Tx) error) []func(*bolt.Tx) error {
	var out []func(*bolt.Tx) error
	for _, w := range kept {
		if guard(func() error { return w(tx) }) == nil {
			out = append(out, w)
		}
	}
	return out
}

// settle checkpoints: bbolt's file then holds every answered commit, for what reads the file
// itself (Check's page walk, a copy). It must not be called inside a read transaction (a
// commit that remaps waits for every reader) nor with writeMu held.
func (s *Store) settle() error {
	if s.readOnly || !s.hasOpen.Load() { // reading: the transaction holds the log, never committed
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.checkpoint()
}
