package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// view runs fn in one short read transaction, or, while the writer holds bbolt's write
// transaction open between checkpoints, inside that transaction under writeMu: it holds every
// answered commit, which bbolt's read transactions see only from the next checkpoint
// (opentx.go). bbolt panics (or faults on the mmap) on some corrupt pages; that becomes an error
// here, so a damaged file fails a read rather than the process. Nothing read may escape fn
// without being copied: the bytes live in the mmap, or in the open transaction's pages.
func (s *Store) view(op string, fn func(tx *bolt.Tx) error) error {
	if f := s.Err(); f != nil {
		return fmt.Errorf("%s: %w", op, f)
	}
	if s.closed.Load() {
		return fmt.Errorf("%s: %w", op, history.ErrClosed)
	}
	err := guard(func() error { return s.readTx(fn) })
	if errors.Is(err, ErrDamaged) {
		return fmt.Errorf("%s: %s: %w; run wend check", op, s.path, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// readTx runs fn in the open write transaction if there is one, else in a read transaction.
// hasOpen is set before a batch in the open transaction is answered, and cleared only once
// bbolt has committed it, so a read begun after an answer finds the commit either way.
func (s *Store) readTx(fn func(tx *bolt.Tx) error) error {
	if s.hasOpen.Load() {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		if s.open.tx != nil {
			return fn(s.open.tx)
		}
	}
	return s.db.View(fn)
}

// Run returns a run's record.
func (s *Store) Run(runID string) (history.Run, error) {
	var r history.Run
	err := s.view("read run "+runID, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRuns).Get([]byte(runID))
		if v == nil {
			return history.ErrNotFound
		}
		var err error
		r, err = decodeRun(tx, []byte(runID), v)
		return err
	})
	return r, err
}

// decodeRun verifies and decodes a run record and sets its LastSeq from the run's last stored
// event: the record does not hold it (storedRun). The last event is checked against its
// checksum and its key, since it sets LastSeq.
func decodeRun(tx *bolt.Tx, id, v []byte) (r history.Run, err error) {
	return decodeRunSharing(tx, id, v, nil)
}

// decodeRunSharing is decodeRun with the strings many records repeat taken from shared (a
// scan's).
func decodeRunSharing(tx *bolt.Tx, id, v []byte, shared sharedStrings) (r history.Run, err error) {
	body, err := unframe(id, v)
	if err != nil {
		return r, fmt.Errorf("run %s: record: %w", id, err)
	}
	if err := decodeRunJSON(body, &r, shared); err != nil {
		return r, fmt.Errorf("run %s: record: %w", id, err)
	}
	if r.RunID != string(id) {
		return r, fmt.Errorf("run %s: record stored under it says run %q", id, r.RunID)
	}
	if r.LastSeq, err = lastEventSeq(tx, id); err != nil {
		return r, fmt.Errorf("run %s: %w", id, err)
	}
	return r, nil
}

// lastEventSeq is the seq of the run's last stored event, 0 when it has none, with that event's
// checksum verified and its seq matching its key.
func lastEventSeq(tx *bolt.Tx, runID []byte) (uint64, error) {
	re, err := findEvents(tx, runID)
	if err != nil {
		return 0, err
	}
	k, v, err := re.last()
	if err != nil {
		return 0, err
	}
	if k == nil {
		return 0, nil
	}
	seq, err := keySeq(k)
	if err != nil {
		return 0, fmt.Errorf("event key %x: %w", k, err)
	}
	if err := checkEventSeq(seq, v); err != nil {
		return 0, fmt.Errorf("event %d: %w", seq, err)
	}
	return seq, nil
}

var seqPrefix = []byte(`{"seq":`)

// checkEventSeq verifies a stored event's checksum and that it says seq, without decoding the
// rest of it: history.EncodeEvent's JSON starts with the seq.
func checkEventSeq(seq uint64, v []byte) error {
	if len(v) < 4 || crc32.Checksum(v[4:], castagnoli) != binary.BigEndian.Uint32(v) {
		return history.ErrChecksum
	}
	j := v[4:]
	if !bytes.HasPrefix(j, seqPrefix) {
		e, err := history.DecodeEvent(v)
		if err != nil {
			return err
		}
		if e.Seq != seq {
			return fmt.Errorf("stored under seq %d, says seq %d", seq, e.Seq)
		}
		return nil
	}
	j = j[len(seqPrefix):]
	end := 0
	for end < len(j) && j[end] >= '0' && j[end] <= '9' {
		end++
	}
	got, err := strconv.ParseUint(string(j[:end]), 10, 64)
	if err != nil || got != seq {
		return fmt.Errorf("stored under seq %d, says seq %s", seq, j[:end])
	}
	return nil
}

// readChunk caps the event bytes one read transaction of Events copies out. A history is
// read in chunks of about this size, each in its own transaction, and decoded outside them:
// decoding a long history in one transaction holds it open for long (docs/performance.md), and a
// commit that must grow the mmap meanwhile waits for it (docs/reliability.md A8).
const readChunk = 1 << 20

// Events returns the run's events with Seq > afterSeq, in order, each checked against its
// checksum and its key. Stored events are never changed, and removed only with their closed run
// (purge.go), so the chunks, read in transactions one after another, add up to the history as
// the last one saw it, or a purge between two of them ends the read with ErrNotFound.
func (s *Store) Events(runID string, afterSeq uint64) ([]history.Event, error) {
	var evs []history.Event
	from := seqKey(afterSeq + 1)
	if afterSeq == 0 {
		// From the first key, whatever it is: event 1 under key 0 (a flipped bit) is an error
		// here, not a history that silently starts at 2.
		from = nil
	}
	next := afterSeq + 1
	err := s.eventChunks(runID, from, nil, func(chunk []kv) error {
		for _, raw := range chunk {
			e, err := decodeEvent(runID, raw.k, raw.v)
			if err != nil {
				return fmt.Errorf("read events of run %s: %w", runID, err)
			}
			// Appends are contiguous (history.CheckAppend): a gap is an event lost to
			// damage, whose history must not read as a shorter one.
			if e.Seq != next {
				return fmt.Errorf("read events of run %s: event %d where event %d should be: %w; run wend check", runID, e.Seq, next, ErrDamaged)
			}
			next++
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
		re, err := findEvents(tx, []byte(runID))
		if err != nil {
			return err
		}
		if !re.any() {
			v := tx.Bucket(bucketRuns).Get([]byte(runID))
			if v == nil {
				return history.ErrNotFound
			}
			_, err := decodeRun(tx, []byte(runID), v) // a record without events yet, or lost ones
			return err
		}
		c := re.cursor()
		size := 0
		k, v := c.seek(from)
		for ; k != nil && (last == nil || bytes.Compare(k, last) <= 0); k, v = c.next() {
			if size >= readChunk {
				more = true
				break
			}
			chunk = append(chunk, kv{bytes.Clone(k), bytes.Clone(v)})
			size += len(v)
		}
		if k == nil {
			return c.ended()
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
// workflow's runs, through the workflow index; else a clause on a search field reads only the
// runs the search index holds in its span (searchwalk.go). Any other filter reads every run
// record, in slices of short reads (scanRuns), so the writer gets in between two of them.
func (s *Store) Runs(f history.RunFilter) ([]history.Run, error) {
	var out []history.Run
	scan := false
	err := s.view("list runs", func(tx *bolt.Tx) error {
		runs := tx.Bucket(bucketRuns)
		add := func(id, v []byte) error {
			r, err := decodeRun(tx, id, v)
			if err != nil {
				return fmt.Errorf("run %s: %w", id, err)
			}
			if f.Match(r) {
				out = append(out, r)
			}
			return nil
		}
		if f.WorkflowID != "" {
			return indexedRuns(tx, f.WorkflowID, add)
		}
		pos, indexed, err := searchCandidates(tx, f, 0)
		if err != nil || !indexed {
			scan = err == nil
			if scan && len(f.Search) == 0 {
				out = make([]history.Run, 0, runsCounted(tx, f.Status))
			}
			return err
		}
		for _, p := range pos {
			_, id, ok := splitStartedKey(p)
			if !ok {
				return fmt.Errorf("search index: malformed key; run wend check")
			}
			if v := runs.Get([]byte(id)); v != nil { // an entry without its run (damage) lists nothing
				if err := add([]byte(id), v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil && scan {
		err = s.scanRuns(func(r history.Run) {
			if f.Match(r) {
				out = append(out, r)
			}
		})
		// In key order, oldest first as run ids are made: reversed, the sort below finds them
		// nearly in order instead of moving 100,000 records across the slice.
		slices.Reverse(out)
	}
	if err != nil {
		return nil, err
	}
	history.SortRuns(out)
	return out, nil
}

// maxCounted bounds runsCounted, so a damaged count cannot make a large allocation.
const maxCounted = 1 << 20

// runsCounted is how many runs of status (of any status: "") the counts kept at commit hold,
// for a scan to make its answer to size rather than grow it (a start lists 100,000 open runs);
// 0 when there are no counts or one is damaged.
func runsCounted(tx *bolt.Tx, status string) int {
	counts := tx.Bucket(bucketCounts)
	if counts == nil {
		return 0
	}
	n := uint64(0)
	err := forEach(counts, func(k, v []byte) error {
		_, st, ok := splitCountKey(k)
		c, err := readCount(k, v)
		if !ok || err != nil {
			return errFrame
		}
		if status == "" || st == status {
			n += c
		}
		return nil
	})
	if err != nil {
		return 0
	}
	return int(min(n, maxCounted))
}

// indexedRuns calls add on every run the workflow index lists under workflowID, after checking
// each entry's checksum, that its run is of that workflow, and that the entries found are as
// many as the workflow's head counts: an entry lost or moved by damage is an error, not a run
// silently missing from the answer.
func indexedRuns(tx *bolt.Tx, workflowID string, add func(id, v []byte) error) error {
	runs := tx.Bucket(bucketRuns)
	prefix := workflowPrefix(workflowID)
	c := tx.Bucket(bucketWorkflows).Cursor()
	k, v := c.Seek(prefix)
	head, hasHead := uint64(0), false
	if bytes.Equal(k, prefix) {
		var err error
		if head, err = readIndexHead(prefix, v); err != nil {
			return fmt.Errorf("workflow index of %q: %w; run wend check", workflowID, err)
		}
		hasHead = true
		k, v = c.Next()
	}
	var n uint64
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		id := k[len(prefix):]
		if err := readIndexEntry(k, v); err != nil {
			return fmt.Errorf("workflow index entry %q -> run %q: %w; run wend check", workflowID, id, err)
		}
		n++
		rv := runs.Get(id)
		if rv == nil {
			return fmt.Errorf("workflow index names run %s, which does not exist; run wend check", id)
		}
		if err := add(id, rv); err != nil {
			return err
		}
	}
	switch {
	case hasHead && head != n:
		return fmt.Errorf("workflow index of %q counts %d run(s), %d found: an entry was lost; run wend check", workflowID, head, n)
	case !hasHead && n > 0:
		return fmt.Errorf("workflow index of %q has lost its head; run wend check", workflowID)
	}
	return nil
}

// Tasks returns every open task, earliest AvailableAt first (then by id, for a stable order).
// A task record that fails its checksum or does not decode is set aside, not returned: tasks
// are derived from the runs' histories, so the engine's repair rebuilds it, and one damaged task
// must not stop every run: the sound tasks come with a
// *history.DamagedTasksError naming the others.
func (s *Store) Tasks() ([]history.Task, error) {
	var out []history.Task
	var damaged []history.DamagedTask
	err := s.view("list tasks", func(tx *bolt.Tx) error {
		return forEach(tx.Bucket(bucketTasks), func(k, v []byte) error {
			t, err := decodeTask(k, v)
			if err != nil {
				damaged = append(damaged, history.DamagedTask{Key: string(k), Problem: err.Error()})
				return nil
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
	if len(damaged) > 0 {
		return out, &history.DamagedTasksError{Damaged: damaged}
	}
	return out, nil
}

// decodeTask verifies and decodes one stored task; the error names it.
func decodeTask(k, v []byte) (history.Task, error) {
	var t history.Task
	body, err := unframe(k, v)
	if err == nil {
		err = decodeTaskJSON(body, &t)
	}
	if err == nil && t.ID != string(k) {
		err = fmt.Errorf("stored under it, the task says id %q", t.ID)
	}
	if err == nil && t.RunID == "" {
		err = errors.New("no run id")
	}
	if err != nil {
		return t, fmt.Errorf("task %q: %w", k, err)
	}
	return t, nil
}
