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
	s.writeMu.Lock() // shared with reads of the open transaction and PutScheduleStates
	defer s.writeMu.Unlock()
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
	} else if lsn, err := s.logBatch(batch, results); err != nil {
		// The record may be partly written: the log ends before it (walread.go). The open
		// transaction goes with the store; the next Open replays what was answered.
		tx.Rollback()
		s.committed()
		s.setFatal(err)
		answerAll(batch, s.Err())
		return -1, nil
	} else if syncErr, err := s.syncAndCommit(tx, batch, results, lsn); syncErr != nil {
		// The record may or may not be durable: the store fails, and the next Open starts from
		// the checkpoint and replays the log.
		s.dropOpen()
		s.setFatal(syncErr)
		answerAll(batch, s.Err())
		return -1, nil
	} else if err != nil {
		s.setFatal(err)
		answerAll(batch, s.Err())
		return -1, nil
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

// logBatch puts the batch's accepted commits in the log and returns the record's LSN; the
// record is synced by syncAndCommit, and that sync is the commit's durable write. Without a log
// it does nothing and bbolt's synced commit is.
func (s *Store) logBatch(batch []*request, results []error) (uint64, error) {
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
	closed, err := s.log.room(len(s.logBuf))
	if err != nil {
		return 0, err
	}
	if closed != "" {
		s.closedSegs = append(s.closedSegs, closed)
	}
	return s.log.put(s.logBuf)
}

// rollLog, after a batch is answered, checkpoints when the open transaction is full or the log
// rolled to a new segment for the batch's record (logBatch): the closed segment is removed at
// that checkpoint, every record in it being in bbolt, which then names the new one as the
// log's tail (keyLogTail).
func (s *Store) rollLog() {
	if s.log == nil {
		return
	}
	if len(s.closedSegs) == 0 && !s.openFull() {
		return
	}
	if s.holdCheckpoints {
		return
	}
	_ = s.checkpoint() // a failure stops the store
}

// syncAndCommit makes the record logBatch put (LSN lsn) durable and leaves tx open for the
// next batches, up to the next checkpoint; without a log it commits tx, synced by bbolt.
// syncErr is the log's, commitErr bbolt's.
func (s *Store) syncAndCommit(tx *bolt.Tx, batch []*request, results []error, lsn uint64) (syncErr, commitErr error) {
	if s.log == nil {
		if err := s.commitBatch(tx); err != nil {
			return nil, err
		}
		testHookSync()
		return nil, nil
	}
	s.keepOpen(tx, batch, results, lsn, len(s.logBuf))
	return s.log.sync(), nil
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
// before, whose records may be in the deleted segment, are committed to bbolt (synced), so
// they are durable without the log. writeMu is held.
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
	// bbolt holds every acknowledged commit now: the next Open needs no log (logid.go).
	if uerr := s.db.Update(unmarkLog); uerr != nil {
		err = fmt.Errorf("%w; and %w", err, uerr)
	} else {
		testHookSync()
	}
	s.setFatal(err)
	return s.Err()
}
