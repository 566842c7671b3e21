package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// Check verifies the whole database and returns every problem found, or none. It reads every
// key of every bucket as Open does (walkTree) and runs bbolt's page-level check (tx.Check), then
// decodes every event of every run with its checksum and runs history.Check on each history,
// and checks the workflow index and the tasks decode. An error is returned only when the check
// itself could not run (store closed or failed).
//
// The walk and the page check each hold one read transaction for the whole file, so a commit
// that must grow the mmap meanwhile waits for it; each run's history is read in chunks of short
// transactions, as Events reads it.
func (s *Store) Check() ([]string, error) {
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("check database: %w", err)
	}
	if s.closed.Load() {
		return nil, fmt.Errorf("check database: %w", history.ErrClosed)
	}
	if err := s.settle(); err != nil {
		return nil, fmt.Errorf("check database: %w", err)
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// The walk first, under guard: bbolt's check skips inline buckets, and runs in a goroutine
	// of its own, where a fault on a damaged page cannot be caught (see openChecked), so it does
	// not run on pages the walk found damaged.
	if err := guard(func() error { return s.db.View(walkTree) }); err != nil {
		add("%s: %v", s.path, err)
		return problems, nil
	}
	// On the file's own pages, as the walk: a store opened for reading holds the log's
	// records in a write transaction it never commits.
	err := guard(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				add("bbolt: %v", err)
			}
			return nil
		})
	})
	if err != nil {
		// A panic the bbolt check did not catch itself (the store is usable, the file is not).
		add("%v", err)
	}
	if len(problems) > 0 {
		return problems, nil // the pages are not to be trusted; walking them may only add noise
	}
	ids, err := s.runIDs()
	if err != nil {
		add("%v", err)
		return problems, nil
	}
	for _, id := range ids {
		for _, p := range s.checkRun(id) {
			add("%s", p)
		}
	}
	problems = append(problems, s.checkIndexAndTasks()...)
	problems = append(problems, s.checkSearchIndex()...)
	problems = append(problems, s.checkReadIndexes()...)
	if note, ack, err := s.logLoss(); err != nil {
		add("%v", err)
	} else if note != "" && ack == "" {
		add("%s: behind what was acknowledged: %s; restore a backup taken before the loss if you have one, and rerun what those commits recorded; then run wend check --acknowledge-log-loss to record that you know (check reports it as a note from then on)", s.path, note)
	}
	return problems, nil
}

// CheckNotes are what Check found that is no problem but the operator should know: a log
// loss that was acknowledged.
func (s *Store) CheckNotes() ([]string, error) {
	note, ack, err := s.logLoss()
	if err != nil || note == "" || ack == "" {
		return nil, err
	}
	return []string{fmt.Sprintf("%s: behind what was acknowledged: %s; %s", s.path, note, ack)}, nil
}

// runIDs lists every run id that has a record or events, reading the keys in slices of short
// reads (keySlices).
func (s *Store) runIDs() ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, b := range [][]byte{bucketRuns, bucketEvents} {
		err := s.keySlices(b, func(k []byte) {
			if !seen[string(k)] {
				seen[string(k)] = true
				ids = append(ids, string(k))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// keySliceLen is how many keys one read of keySlices copies out.
const keySliceLen = 4096

// keySlices calls fn on every key of the top-level bucket name, in order, read in slices of
// keySliceLen keys, each its own short read resuming after the last key.
func (s *Store) keySlices(name []byte, fn func(k []byte)) error {
	var from []byte
	for {
		var keys [][]byte
		err := s.view("check database", func(tx *bolt.Tx) error {
			c := tx.Bucket(name).Cursor()
			for k, _ := c.Seek(from); k != nil && len(keys) < keySliceLen; k, _ = c.Next() {
				keys = append(keys, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			fn(k)
		}
		if len(keys) < keySliceLen {
			return nil
		}
		from = append(keys[len(keys)-1], 0) // the least key after it
	}
}

// checkRun checks one run: every stored event decodes under its own seq with its checksum, and
// history.Check (contiguous seqs, one start, at most one terminal event and nothing after it, the
// status agreeing) passes on the history with the run's record. The record is read first, then the events up to the record's last seq, in
// chunks of short transactions as Events reads them: stored events never change, so these are the
// history the record was read with even while commits go on, and a commit that must grow the mmap
// waits for one chunk at most (docs/reliability.md A8).
func (s *Store) checkRun(id string) []string {
	r, err := s.Run(id)
	if err != nil {
		return []string{fmt.Sprintf("run %s: record: %v", id, err)}
	}
	var out []string
	var evs []history.Event
	// From the first key, whatever it is: a key that is no seq is reported too.
	err = s.eventChunks(id, nil, seqKey(r.LastSeq), func(chunk []kv) error {
		for _, raw := range chunk {
			e, err := decodeEvent(id, raw.k, raw.v)
			if err != nil {
				out = append(out, err.Error()) // keep going: the report should name every bad event
				continue
			}
			evs = append(evs, e)
		}
		return nil
	})
	if err != nil {
		return append(out, err.Error())
	}
	if len(out) == 0 { // else history.Check would only repeat the gaps the bad events left
		for _, p := range history.Check(r, evs) {
			out = append(out, p.String())
		}
		for _, p := range history.CheckRecord(r, evs) {
			out = append(out, p.String())
		}
	}
	return out
}

// checkIndexAndTasks checks every workflow index entry and head against its checksum, the
// entries point at runs of that workflow and are as many as the head counts, every run is
// indexed, and every task verifies, decodes and belongs to a stored run.
func (s *Store) checkIndexAndTasks() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	err := s.view("check database", func(tx *bolt.Tx) error {
		runs := tx.Bucket(bucketRuns)
		seen := map[string]bool{}
		heads := map[string]uint64{}
		entries := map[string]uint64{}
		err := forEach(tx.Bucket(bucketWorkflows), func(k, v []byte) error {
			wf, id, ok := splitWorkflowKey(k)
			switch {
			case !ok:
				add("workflow index: malformed key %x", k)
				return nil
			case id == "":
				n, err := readIndexHead(k, v)
				if err != nil {
					add("workflow index: head of %q: %v", wf, err)
				} else {
					heads[wf] = n
				}
				return nil
			}
			entries[wf]++
			if err := readIndexEntry(k, v); err != nil {
				add("workflow index: %s -> run %s: %v", wf, id, err)
			}
			var r history.Run
			rv := runs.Get([]byte(id))
			body, err := unframe([]byte(id), rv)
			if rv == nil || err != nil || json.Unmarshal(body, &r) != nil || r.WorkflowID != wf {
				add("workflow index: %s -> run %s does not match a run record", wf, id)
			}
			seen[id] = true
			return nil
		})
		if err != nil {
			return err
		}
		for wf, n := range entries {
			if h, ok := heads[wf]; ok && h != n {
				add("workflow index: %q counts %d run(s), %d indexed", wf, h, n)
			} else if !ok {
				add("workflow index: %q has no head", wf)
			}
		}
		for wf, h := range heads {
			if _, ok := entries[wf]; !ok {
				add("workflow index: %q counts %d run(s), none indexed", wf, h)
			}
		}
		err = forEach(runs, func(k, _ []byte) error {
			if !seen[string(k)] {
				add("run %s: missing from the workflow index", k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return forEach(tx.Bucket(bucketTasks), func(k, v []byte) error {
			t, err := decodeTask(k, v)
			if err != nil {
				add("%v (repair rebuilds it from its run's history)", err)
			} else if runs.Get([]byte(t.RunID)) == nil {
				add("task %s: run %s does not exist", k, t.RunID)
			}
			return nil
		})
	})
	if err != nil {
		out = append(out, err.Error())
	}
	slices.Sort(out) // map order must not reach the report
	return out
}

// splitWorkflowKey reverses workflowKey.
func splitWorkflowKey(k []byte) (wf, run string, ok bool) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) < n {
		return "", "", false
	}
	return string(k[w : w+int(n)]), string(k[w+int(n):]), true
}
