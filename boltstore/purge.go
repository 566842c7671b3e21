package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// Purge deletes closed runs for good (wend purge, retention; docs/design.md, "Purge and retention").
//
// A run is its record, its events bucket, its workflow index entry (and its share of the
// workflow's head count) and any task still naming it. Purge deletes them together, a batch of
// runs per bbolt transaction, committed (synced) by bbolt: a crash leaves each run whole or
// gone, never a record without events or an index entry without its run. The batches are small,
// so a running serve's commits interleave with a long purge, and a batch holds the writer's
// lock only to begin (purgeBatch), so reads run beside it. Purges do not go through the log: a
// batch checkpoints the log's open transaction first and the writer's next batch waits for the
// purge's commit before it writes its record, so no record the log replays after a crash is
// older than a purge bbolt holds.
//
// An open run is never purged. A child run is purged with its parent, or after it: while its
// parent is stored, a child goes only as a closed descendant of a run being purged (after it,
// in the same batch or a later one), never on its own; once the parent is gone (a crash between
// two batches), the child is selected by the filter as any run is. So no child is purged while
// its parent is open, and none goes before its parent.

// PurgeBatch is how many runs one purge transaction deletes at most, and purgeSlice how long
// it deletes at most (it stops after the run that takes it past): a commit waiting behind a
// batch waits for that and one bbolt commit, a few milliseconds, whatever the runs' sizes.
// A batch costs two bbolt commits where commits interleave (the log's open transaction first,
// then the batch: see purgeBatch), about 7 ms on a loaded machine against 1.3 ms to delete 64
// runs of 4 events, so a batch fills its time rather than stopping at a count that small.
const PurgeBatch = 256

// purgeSlice is a var for tests that need batches of exactly PurgeBatch runs.
var purgeSlice = 2 * time.Millisecond

// purgeScanChunk is how many run records one read transaction of PurgeCandidates decodes:
// between checkpoints that read holds the writer, so a scan of every run (retention's, each
// minute) delays a commit by about a millisecond at most.
const purgeScanChunk = 256

// PurgeCandidates returns the closed runs match selects that have no stored parent, each
// followed by its closed descendants (a subtree under an open run stays), oldest closed first.
// It deletes nothing (a dry run). match sees only closed runs.
func (s *Store) PurgeCandidates(match func(history.Run) bool) ([]history.Run, error) {
	all := map[string]history.Run{}
	var order []history.Run
	err := s.scanRuns(func(r history.Run) {
		all[r.RunID] = r
		order = append(order, r)
	})
	if err != nil {
		return nil, fmt.Errorf("select runs to purge: %w", err)
	}
	return selectPurge(all, order, match), nil
}

// selectPurge picks from every run (all, and the same runs in order) the ones to purge.
func selectPurge(all map[string]history.Run, order []history.Run, match func(history.Run) bool) []history.Run {
	children := map[string][]string{}
	for _, r := range order {
		if r.ParentRunID != "" {
			children[r.ParentRunID] = append(children[r.ParentRunID], r.RunID)
		}
	}
	slices.SortStableFunc(order, func(a, b history.Run) int {
		if c := a.ClosedAt.Compare(b.ClosedAt); c != 0 {
			return c
		}
		return bytes.Compare([]byte(a.RunID), []byte(b.RunID))
	})
	seen := map[string]bool{}
	var out []history.Run
	var add func(id string)
	add = func(id string) {
		r, ok := all[id]
		if !ok || seen[id] || r.Open() {
			return
		}
		seen[id] = true
		out = append(out, r)
		for _, c := range children[id] {
			add(c)
		}
	}
	for _, r := range order {
		if _, hasParent := all[r.ParentRunID]; !r.Open() && !hasParent && match(r) {
			add(r.RunID)
		}
	}
	return out
}

// scanRuns calls fn on every run record, read in chunks of short read transactions, so a long
// scan never holds the writer (reads inside the open transaction take its lock) for long.
func (s *Store) scanRuns(fn func(history.Run)) error {
	var from []byte
	shared := sharedStrings{}
	chunk := make([]history.Run, 0, purgeScanChunk)
	for {
		chunk = chunk[:0]
		more := false
		err := s.view("list runs", func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketRuns).Cursor()
			for k, v := c.Seek(from); k != nil; k, v = c.Next() {
				if len(chunk) == purgeScanChunk {
					more = true
					break
				}
				r, err := decodeRunSharing(tx, k, v, shared)
				if err != nil {
					return fmt.Errorf("%w; run wend check", err)
				}
				chunk = append(chunk, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, r := range chunk {
			fn(r)
		}
		if !more {
			return nil
		}
		from = append([]byte(chunk[len(chunk)-1].RunID), 0) // the least key after it
	}
}

// PurgeRuns deletes the runs named by ids that are still closed and whose parent, if any, is
// gone by then (deleted before them, in this batch or an earlier one: a child follows its
// parent in ids), in transactions of PurgeBatch runs, and returns the ones it deleted, in
// order. A run already gone, open or with its parent stored is skipped. done, when not nil, is called after each committed batch with the runs
// deleted so far. Cancelling ctx stops the purge between two batches; the batches committed
// stay purged.
func (s *Store) PurgeRuns(ctx context.Context, ids []string, done func(n int)) ([]history.Run, error) {
	var out []history.Run
	tasks, err := s.tasksOf(ids)
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	for len(ids) > 0 {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("purge: %w", err)
		}
		got, n, err := s.purgeBatch(ids[:min(len(ids), PurgeBatch)], tasks)
		out = append(out, got...)
		if err != nil {
			return out, err
		}
		ids = ids[n:]
		if done != nil {
			done(len(out))
		}
	}
	return out, nil
}

// purgeBatch deletes one batch of runs in one bbolt transaction, synced when it returns. It
// takes writeMu only to begin: the log's open transaction, if any, is checkpointed, so that
// bbolt holds every answered commit and no read needs the writer's lock, and the purge's own
// write transaction is begun. Then writeMu is let go: bbolt's writer lock, which the
// transaction holds, keeps the writer's next batch waiting at its begin (before its log record
// is written, so no record the log replays is older than a purge bbolt holds), while reads go
// to bbolt's read transactions beside the batch instead of waiting for it.
func (s *Store) purgeBatch(ids []string, tasks map[string][][]byte) (out []history.Run, n int, err error) {
	tx, err := s.beginOwnWrite("purge")
	if err != nil {
		return nil, 0, err
	}
	err = guard(func() error {
		var err error
		out, n, err = deleteRuns(tx, ids, tasks, time.Now().Add(purgeSlice))
		return err
	})
	switch {
	case errors.Is(err, ErrDamaged):
		// bbolt panicked in tx: it cannot be trusted to roll back either. The store fails, as
		// a commit on damaged pages does.
		_ = guard(tx.Rollback)
		s.setFatal(fmt.Errorf("purge: %s: %w; run wend check", s.path, err))
		return nil, 0, s.Err()
	case err != nil:
		tx.Rollback()
		return nil, 0, fmt.Errorf("purge: %w", err)
	case len(out) == 0:
		tx.Rollback()
		return nil, n, nil
	}
	testHookPurge("commit")
	if err := s.commitTx(tx); err != nil {
		s.setFatal(err)
		return nil, 0, fmt.Errorf("purge: %w", s.Err())
	}
	testHookSync()
	s.boltTxs.Add(1)
	return out, n, nil
}

// beginOwnWrite checkpoints the open transaction and begins a write transaction of the
// caller's own (a purge batch's, op names it), under writeMu, which it lets go before returning.
func (s *Store) beginOwnWrite(op string) (*bolt.Tx, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.usable(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.commitOpen(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		s.setFatal(fmt.Errorf("begin transaction: %w", err))
		return nil, fmt.Errorf("%s: %w", op, s.Err())
	}
	return tx, nil
}

// testHookPurge, set only by tests, is called in a purge batch before its commit, so a crash
// test can kill the process there.
var testHookPurge = func(step string) {}

// deleteRuns deletes, in tx, each run of ids that exists, is closed and has no stored parent
// (one deleted earlier in tx is not), with everything of it, until it has looked at every id
// or the clock passes until (after one run at least); it returns the runs deleted and how many
// ids it looked at.
func deleteRuns(tx *bolt.Tx, ids []string, tasks map[string][][]byte, until time.Time) ([]history.Run, int, error) {
	runs := tx.Bucket(bucketRuns)
	var out []history.Run
	gone := map[string]bool{}
	n := 0
	for _, id := range ids {
		if n > 0 && time.Now().After(until) {
			break
		}
		n++
		v := runs.Get([]byte(id))
		if v == nil {
			continue
		}
		r, err := decodeRun(tx, []byte(id), v)
		if err != nil {
			return nil, 0, fmt.Errorf("%w; run wend check", err)
		}
		if r.Open() || (r.ParentRunID != "" && runs.Get([]byte(r.ParentRunID)) != nil) {
			continue
		}
		if err := deleteRun(tx, r); err != nil {
			return nil, 0, fmt.Errorf("run %s: %w", id, err)
		}
		gone[id] = true
		out = append(out, r)
	}
	if len(out) > 0 {
		if err := deleteTasksOf(tx, gone, tasks); err != nil {
			return nil, 0, err
		}
	}
	return out, n, nil
}

// deleteRun deletes r's record, events, workflow index entry and search index entries.
func deleteRun(tx *bolt.Tx, r history.Run) error {
	id := []byte(r.RunID)
	if err := tx.Bucket(bucketRuns).Delete(id); err != nil {
		return err
	}
	if err := deleteEvents(tx, id); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if err := unindexSearch(tx, r); err != nil {
		return err
	}
	if err := uncount(tx, r); err != nil {
		return err
	}
	if err := noteChange(tx, id, true); err != nil {
		return err
	}
	return unindex(tx.Bucket(bucketWorkflows), r.WorkflowID, r.RunID)
}

// unindex deletes a run's workflow index entry and counts it off the workflow's head; the head
// goes with the workflow's last entry. A head that is not sound is counted afresh.
func unindex(wfs *bolt.Bucket, workflowID, runID string) error {
	k := workflowKey(workflowID, runID)
	if wfs.Get(k) == nil {
		return nil
	}
	if err := wfs.Delete(k); err != nil {
		return err
	}
	prefix := workflowPrefix(workflowID)
	if v := wfs.Get(prefix); v != nil {
		if n, err := readIndexHead(prefix, v); err == nil && n > 1 {
			return wfs.Put(prefix, indexHead(prefix, n-1))
		}
		if err := wfs.Delete(prefix); err != nil {
			return err
		}
	}
	return countIndex(wfs, workflowID, 0) // no head: count what is left
}

// taskScanChunk is how many task records one read transaction of tasksOf decodes.
const taskScanChunk = 1024

// tasksOf finds the keys of the tasks that name a run of ids, reading the tasks in slices of
// short reads, before the purge's batches: a batch then deletes its runs' tasks by key instead
// of reading every task while it holds the writer, which a serve with many waiting runs (a
// timer task each) would feel at every batch.
func (s *Store) tasksOf(ids []string) (map[string][][]byte, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := map[string][][]byte{}
	err := s.taskSlices(func(k []byte, t history.Task) {
		if want[t.RunID] {
			out[t.RunID] = append(out[t.RunID], bytes.Clone(k))
		}
	})
	return out, err
}

// taskSlices calls fn on every sound task record (damaged ones are Check's to name), read in
// slices of taskScanChunk records, each its own short read resuming from the next key; fn
// runs inside the read and must copy k to keep it.
func (s *Store) taskSlices(fn func(k []byte, t history.Task)) error {
	var from []byte
	for {
		more := false
		err := s.view("list tasks", func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketTasks).Cursor()
			n := 0
			for k, v := c.Seek(from); k != nil; k, v = c.Next() {
				if n == taskScanChunk {
					more, from = true, bytes.Clone(k)
					return nil
				}
				n++
				if t, err := decodeTask(k, v); err == nil {
					fn(k, t)
				}
			}
			return nil
		})
		if err != nil || !more {
			return err
		}
	}
}

// TasksOfRun returns the open tasks of one run, earliest first, reading the tasks in slices
// of short reads (an export's, which must not hold the writer while it reads every task of a
// serve with many waiting runs). Tasks committed while it reads may be missed or seen.
func (s *Store) TasksOfRun(runID string) ([]history.Task, error) {
	var out []history.Task
	err := s.taskSlices(func(_ []byte, t history.Task) {
		if t.RunID == runID {
			out = append(out, t)
		}
	})
	slices.SortFunc(out, func(a, b history.Task) int {
		if c := a.AvailableAt.Compare(b.AvailableAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

// deleteTasksOf deletes the tasks of the runs in gone that tasksOf found (tasks, by run id),
// each only if it still names its run. A closed run keeps none normally; a task left over (a
// timer of a run terminated from outside, a damaged record's guess) would otherwise name a run
// that no longer exists. One made for a closed run after tasksOf read the tasks is wend
// check's to report; damaged task records are left to it too.
func deleteTasksOf(tx *bolt.Tx, gone map[string]bool, tasks map[string][][]byte) error {
	b := tx.Bucket(bucketTasks)
	for id := range gone {
		for _, k := range tasks[id] {
			v := b.Get(k)
			if v == nil {
				continue
			}
			if t, err := decodeTask(k, v); err != nil || t.RunID != id {
				continue
			}
			if err := b.Delete(k); err != nil {
				return fmt.Errorf("task %s: %w", k, err)
			}
		}
	}
	return nil
}
