package boltstore

import (
	"fmt"
	"runtime/debug"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// write applies a batch of requests in one bbolt transaction and answers each. Commits that
// fail validation are answered alone; the others still commit. A commit whose apply fails
// (which prepare makes all but impossible) is answered with its error and the transaction is
// redone without it, so its partial writes never reach disk. Between checkpoints the
// transaction may be one left open by the batches before (opentx.go).
func (s *Store) write(batch []*request) {
	s.writeMu.Lock() // uncontended but for PutScheduleStates
	defer s.writeMu.Unlock()
	defer s.maybeDropMapped()
	for len(batch) > 0 {
		if err := s.Err(); err != nil {
			answerAll(batch, err)
			return
		}
		if err := s.checkLog(); err != nil {
			answerAll(batch, err)
			return
		}
		bad, err := s.writeOnce(batch)
		if bad < 0 {
			return
		}
		s.rejected.Add(1)
		batch[bad].done <- err
		batch = slices.Delete(batch, bad, bad+1)
	}
}

// writeOnce tries the batch. It returns the index of a request whose apply failed (and rolls
// back), or -1 when every request has been answered.
func (s *Store) writeOnce(batch []*request) (bad int, err error) {
	tx, reused, err := s.beginWrite()
	if err != nil {
		s.setFatal(fmt.Errorf("begin transaction: %w", err))
		answerAll(batch, s.Err())
		return -1, nil
	}
	// bbolt panics (or faults on the mmap) on some damaged pages. In the writer goroutine that
	// would end the process without a word; inline, in a caller whose panics are recovered
	// (net/http's), it would leave this transaction open and every later commit waiting for it.
	// The store cannot write any more either way: it fails, as on a commit error
	// (docs/reliability.md A5). Nothing of this batch has been answered when bbolt can panic.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			_ = guard(tx.Rollback)
			if reused || s.open.tx == tx {
				s.committed()
			}
			s.setFatal(fmt.Errorf("write: %s: %w (bbolt: %v); run wend check", s.path, ErrDamaged, r))
			answerAll(batch, s.Err())
			bad, err = -1, nil
		}
	}()
	view := batchView{tx: tx}
	results := make([]error, len(batch))
	accepted := 0
	for i, r := range batch {
		if err := view.validate(r.p); err != nil {
			results[i] = err
			continue
		}
		if err := apply(tx, r.p); err != nil {
			s.redoOpen(tx, reused)
			return i, err
		}
		if i < len(batch)-1 { // only a later commit of the batch reads the view
			view.accept(r.p)
		}
		accepted++
	}
	if accepted == 0 {
		if !reused {
			tx.Rollback() // nothing to make durable: spare the fsync
		}
	} else if lsn, err := s.logBatch(tx, batch, results); err != nil {
		tx.Rollback()
		s.committed()
		s.setFatal(err)
		answerAll(batch, s.Err())
		return -1, nil
	} else if syncErr, err := s.syncAndCommit(tx, batch, results, lsn); syncErr != nil {
		// bbolt may hold the transaction (committed during the sync), or hold it open: the
		// store fails, and the next Open starts from the checkpoint and replays the log.
		s.dropOpen()
		s.setFatal(syncErr)
		answerAll(batch, s.Err())
		return -1, nil
	} else if err != nil {
		if s.log != nil && !s.log.unappend() {
			err = fmt.Errorf("%w (the log could not take back its record: the commit may be replayed at the next open)", err)
		}
		s.setFatal(err)
		answerAll(batch, s.Err())
		return -1, nil
	} else if !s.db.NoSync {
		testHookSync()
	}
	s.txs.Add(min(uint64(accepted), 1))
	for i, r := range batch {
		if results[i] != nil {
			s.rejected.Add(1)
		} else {
			s.commits.Add(1)
		}
		r.done <- results[i]
	}
	if accepted > 0 {
		s.rollLog()
	}
	return -1, nil
}

// logBatch puts the batch's accepted commits in the log, with the record's LSN put in tx, and
// returns the LSN; the record is synced by syncAndCommit, and that sync is the commit's durable
// write. Without a log it does nothing and bbolt's synced commit is.
func (s *Store) logBatch(tx *bolt.Tx, batch []*request, results []error) (uint64, error) {
	if s.log == nil {
		return 0, nil
	}
	ps := s.logPs[:0]
	for i, r := range batch {
		if results[i] == nil {
			ps = append(ps, r.p)
		}
	}
	s.logBuf = encodeBatch(s.logBuf[:0], ps)
	clear(ps) // the commits are not kept past their batch
	s.logPs = ps[:0]
	// An open transaction commits what its earlier batches put as well.
	if err := s.beforeCommit(tx, s.open.bytes+len(s.logBuf)); err != nil {
		return 0, err
	}
	if err := putLogLSN(tx, s.log.next); err != nil {
		return 0, err
	}
	return s.log.put(s.logBuf)
}

// rollLog starts a new log segment when the current one is full and hands the old one to the
// checkpointer: every record in it is committed to bbolt by now. Under unsynced commits it hands
// a pin of the state just committed too, the checkpoint to be (pin.go); and it asks for one
// when checkpointDue even when no segment is full.
func (s *Store) rollLog() {
	if s.log == nil {
		return
	}
	s.sinceCheckpoint++
	full := s.log.full()
	if !full && (!s.db.NoSync || !checkpointDue(s.sinceCheckpoint, s.pendingPages())) {
		return
	}
	if s.commitOpen() != nil { // the pin must see every record of the segment
		return
	}
	var pin *bolt.Tx
	var head []byte
	if s.db.NoSync {
		var err error
		if pin, err = s.db.Begin(false); err == nil {
			if head, err = s.metaHead(pin); err != nil {
				pin.Rollback()
			}
		}
		if err != nil {
			s.setFatal(fmt.Errorf("checkpoint: %w", err))
			return
		}
	}
	s.sinceCheckpoint = 0
	var old string
	if full {
		var err error
		if old, err = s.log.roll(); err != nil {
			if pin != nil {
				pin.Rollback()
			}
			s.setFatal(err)
			return
		}
	}
	s.ckpt.add(checkpointItem{segment: old, pin: pin, head: head})
}

// checkpointEvery bounds the transactions between two checkpoints. bbolt frees a page that was
// allocated past its high water mark only once no reader predates it, so under the pin such
// pages (most of a growing database's) wait for the next checkpoint: the file grows by what is
// written meanwhile, and bbolt scans its pending pages at every commit. A checkpoint costs a
// background sync.
const checkpointEvery = 1024

// A checkpoint is due after checkpointSoon transactions when bbolt holds more than
// pendingPagesMax pages pending. bbolt keeps them in a map by transaction, which it walks four
// times in every write transaction (Begin's release of pending pages, the statistics at the
// end), and a Go map never shrinks: the most transactions it ever held pending price every
// later commit. A new or growing database frees pages of its high water mark at each commit;
// one settled in reusing its free pages holds few pending, and keeps the longer interval
// (docs/performance.md, "Begin under the checkpoint's pin, and the CPU of a step's commit").
const (
	checkpointSoon  = 256
	pendingPagesMax = 256
)

// checkpointDue reports whether the writer should ask for a checkpoint, since transactions
// after the last one it asked for, with pending pages pending in bbolt.
func checkpointDue(since, pending int) bool {
	return since >= checkpointEvery || since >= checkpointSoon && pending > pendingPagesMax
}

// pendingPages is bbolt's count of pages pending after the last write transaction, asked for
// only once checkpointSoon transactions have passed.
func (s *Store) pendingPages() int {
	if s.sinceCheckpoint < checkpointSoon {
		return 0
	}
	return s.db.Stats().PendingPageN
}

// syncAndCommit makes the record logBatch put (LSN lsn) durable and commits tx to bbolt, or
// leaves it open for the next batches (opentx.go). syncErr is the log's, commitErr bbolt's.
//
// Between checkpoints (db.NoSync) bbolt's unsynced commit goes between the start of the
// record's writeback and the fdatasync that waits for it, so its page writes into the cache
// overlap the device's write of the record (docs/design.md, "bbolt's commit during the record's
// write"). bbolt may then hold a transaction whose record is not durable yet, which no crash
// can expose: recovery writes the checkpoint's meta page back and replays the log, so nothing
// bbolt holds past the checkpoint is read. With synced commits (no checkpoint file: bbolt's
// meta is where recovery starts) bbolt commits only once the record is synced.
func (s *Store) syncAndCommit(tx *bolt.Tx, batch []*request, results []error, lsn uint64) (syncErr, commitErr error) {
	switch {
	case s.log == nil:
		return nil, s.commitBatch(tx)
	case !s.db.NoSync:
		if err := s.log.sync(); err != nil {
			tx.Rollback()
			s.committed()
			return err, nil
		}
		return nil, s.commitBatch(tx)
	}
	s.log.startWriteback()
	if s.keepOpen(tx, batch, results, lsn, len(s.logBuf)) {
		return s.log.sync(), nil
	}
	commitErr = s.commitBatch(tx)
	return s.log.sync(), commitErr
}

// commitBatch commits tx, which holds the batch and what the open transaction held before it.
func (s *Store) commitBatch(tx *bolt.Tx) error {
	err := s.commitTx(tx)
	s.committed()
	if err != nil {
		return err
	}
	s.boltTxs.Add(1)
	return nil
}

// commitTx commits, or fails as a test asks.
func (s *Store) commitTx(tx *bolt.Tx) error {
	if s.failCommit != nil {
		if err := s.failCommit(); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

func answerAll(batch []*request, err error) {
	for _, r := range batch {
		r.done <- err
	}
}

// checkLog, before a batch, stops the store when its log segment was deleted from outside
// (ErrLogRemoved): the batch is not acknowledged, nor any after it. The batches acknowledged
// before, whose records may be in the deleted segment, are committed to bbolt and bbolt is
// synced, so they are durable without the log. writeMu is held.
func (s *Store) checkLog() error {
	if s.log == nil {
		return nil
	}
	err := s.log.stillLinked()
	if err == nil {
		return nil
	}
	if cerr := s.commitOpen(); cerr != nil {
		return cerr
	}
	// Under pinMu, so no checkpoint is saved after the removal below.
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	// bbolt, synced, holds every acknowledged commit now: the next Open needs no log (logid.go).
	if uerr := s.db.Update(unmarkLog); uerr != nil {
		err = fmt.Errorf("%w; and %w", err, uerr)
	}
	testHookSync()
	if serr := s.db.Sync(); serr != nil {
		err = fmt.Errorf("%w; and bbolt's sync failed: %w", err, serr)
	} else if rerr := removeCheckpoint(s.path); rerr != nil {
		// A checkpoint file left would rewind the next Open to it, with no log to replay.
		err = fmt.Errorf("%w; and %w", err, rerr)
	}
	s.setFatal(err)
	return s.Err()
}
