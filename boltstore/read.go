package boltstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// view runs fn in one short read transaction. bbolt panics (or faults on the mmap) on some
// corrupt pages; that becomes an error here, so a damaged file fails a read rather than the
// process. Nothing read may escape fn without being copied: the bytes live in the mmap.
func (s *Store) view(op string, fn func(tx *bolt.Tx) error) error {
	if f := s.Err(); f != nil {
		return fmt.Errorf("%s: %w", op, f)
	}
	if s.closed.Load() {
		return fmt.Errorf("%s: %w", op, history.ErrClosed)
	}
	err := guard(func() error { return s.db.View(fn) })
	if errors.Is(err, ErrDamaged) {
		return fmt.Errorf("%s: %s: %w; run wend check", op, s.path, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// Run returns a run's record.
func (s *Store) Run(runID string) (history.Run, error) {
	r, _, err := s.runRecord(runID)
	return r, err
}

// runRecord is Run, and also the last_seq the record has stored (see decodeRun).
func (s *Store) runRecord(runID string) (r history.Run, stored uint64, err error) {
	err = s.view("read run "+runID, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRuns).Get([]byte(runID))
		if v == nil {
			return history.ErrNotFound
		}
		var err error
		r, stored, err = decodeRun(tx, []byte(runID), v)
		return err
	})
	return r, stored, err
}

// decodeRun decodes a run record and sets its LastSeq from the run's last stored event: a
// commit that changes nothing else in the record does not rewrite it (see apply), so the
// stored last_seq, also returned, may be behind, never ahead, and the events are the truth
// anyway. (A stored last_seq ahead of the events means events were lost: Check says so.)
func decodeRun(tx *bolt.Tx, id, v []byte) (r history.Run, stored uint64, err error) {
	if err := json.Unmarshal(v, &r); err != nil {
		return r, 0, err
	}
	stored = r.LastSeq
	seq, err := lastStoredSeq(tx, id)
	if err != nil {
		return r, stored, fmt.Errorf("run %s: %w", id, err)
	}
	if seq > 0 {
		r.LastSeq = seq
	}
	return r, stored, nil
}

// readChunk caps the event bytes one read transaction of Events copies out. A history is
// read in chunks of about this size, each in its own transaction, and decoded outside them:
// decoding a 50 MB history in one transaction held it 0.7-1.2 s here (5 s under -race), and a
// commit that must grow the mmap meanwhile waits for it (RELIABILITY A8).
const readChunk = 1 << 20

// Events returns the run's events with Seq > afterSeq, in order, each checked against its
// checksum and its key. Stored events are never changed or removed, so the chunks, read in
// transactions one after another, add up to the history as the last one saw it.
func (s *Store) Events(runID string, afterSeq uint64) ([]history.Event, error) {
	var evs []history.Event
	err := s.eventChunks(runID, seqKey(afterSeq+1), nil, func(chunk []kv) error {
		for _, raw := range chunk {
			e, err := decodeEvent(runID, raw.k, raw.v)
			if err != nil {
				return fmt.Errorf("read events of run %s: %w", runID, err)
			}
			evs = append(evs, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return evs, nil
}

// testHookChunk, set only by tests, is called between two chunks of a history read by
// eventChunks, when no transaction of that read is open.
var testHookChunk = func(runID string) {}

// eventChunks hands fn the run's stored events with keys from from on (nil: the first), and up
// to last when it is not nil, in chunks: each is copied out of its own read transaction
// (eventChunk) and handed over after that transaction has ended.
func (s *Store) eventChunks(runID string, from, last []byte, fn func(chunk []kv) error) error {
	for {
		chunk, more, err := s.eventChunk(runID, from, last)
		if err != nil {
			return err
		}
		if err := fn(chunk); err != nil {
			return err
		}
		if !more {
			return nil
		}
		testHookChunk(runID)
		from = append(slices.Clone(chunk[len(chunk)-1].k), 0) // the least key after it
	}
}

// eventChunk copies the run's stored events with keys from from on (up to last, when not nil)
// out of one read transaction, up to readChunk bytes (at least one event), and says whether more
// follow.
func (s *Store) eventChunk(runID string, from, last []byte) (chunk []kv, more bool, err error) {
	err = s.view("read events of run "+runID, func(tx *bolt.Tx) error {
		eb := tx.Bucket(bucketEvents).Bucket([]byte(runID))
		if eb == nil {
			if tx.Bucket(bucketRuns).Get([]byte(runID)) == nil {
				return history.ErrNotFound
			}
			return nil // a run record without events yet
		}
		c := eb.Cursor()
		size := 0
		for k, v := c.Seek(from); k != nil && (last == nil || bytes.Compare(k, last) <= 0); k, v = c.Next() {
			if size >= readChunk {
				more = true
				break
			}
			chunk = append(chunk, kv{bytes.Clone(k), bytes.Clone(v)})
			size += len(v)
		}
		return nil
	})
	return chunk, more, err
}

// decodeEvent decodes one stored event (json.Unmarshal copies, so the result outlives the tx)
// and checks it sits under its own seq.
func decodeEvent(runID string, k, v []byte) (history.Event, error) {
	seq, err := keySeq(k)
	if err != nil {
		return history.Event{}, fmt.Errorf("run %s: event key %x: %w", runID, k, err)
	}
	e, err := history.DecodeEvent(v)
	if err != nil {
		return history.Event{}, fmt.Errorf("run %s: event %d: %w", runID, seq, err)
	}
	if e.Seq != seq {
		return history.Event{}, fmt.Errorf("run %s: event stored under seq %d says seq %d", runID, seq, e.Seq)
	}
	return e, nil
}

// Runs returns the runs matching f, newest first. A workflow id filter reads only that
// workflow's runs, through the index.
func (s *Store) Runs(f history.RunFilter) ([]history.Run, error) {
	var out []history.Run
	err := s.view("list runs", func(tx *bolt.Tx) error {
		runs := tx.Bucket(bucketRuns)
		add := func(id, v []byte) error {
			r, _, err := decodeRun(tx, id, v)
			if err != nil {
				return fmt.Errorf("run %s: %w", id, err)
			}
			if f.Match(r) {
				out = append(out, r)
			}
			return nil
		}
		if f.WorkflowID == "" {
			return forEach(runs, add)
		}
		prefix := workflowPrefix(f.WorkflowID)
		c := tx.Bucket(bucketWorkflows).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			id := k[len(prefix):]
			v := runs.Get(id)
			if v == nil {
				return fmt.Errorf("workflow index names run %s, which does not exist", id)
			}
			if err := add(id, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	history.SortRuns(out)
	return out, nil
}

// Tasks returns every open task, earliest AvailableAt first (then by id, for a stable order).
func (s *Store) Tasks() ([]history.Task, error) {
	var out []history.Task
	err := s.view("list tasks", func(tx *bolt.Tx) error {
		return forEach(tx.Bucket(bucketTasks), func(k, v []byte) error {
			var t history.Task
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("task %s: %w", k, err)
			}
			out = append(out, t)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b history.Task) int {
		if c := a.AvailableAt.Compare(b.AvailableAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
