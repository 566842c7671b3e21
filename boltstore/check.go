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
	ids, bad, err := s.runIDs()
	if err != nil {
		add("%v", err)
		return problems, nil
	}
	problems = append(problems, bad...)
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
// reads (keySlices), and reports the keys of the shared events bucket that are no run's event
// key.
func (s *Store) runIDs() (ids, bad []string, err error) {
	seen := map[string]bool{}
	note := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			ids = append(ids, string(k))
		}
	}
	for _, b := range [][]byte{bucketRuns, bucketEvents} {
		if err := s.keySlices(b, note); err != nil {
			return nil, nil, err
		}
	}
	// Every slot is one run's, and every event of the shared bucket is under a run's slot.
	slots := map[string]string{}
	err = s.sliceEach(bucketRunSlots, func(_ *bolt.Tx, k, v []byte) error {
		note(k)
		slot, err := readSlot(k, v)
		if err != nil {
			bad = append(bad, fmt.Sprintf("run %s: events slot: %v", k, err))
			return nil
		}
		if other, ok := slots[string(slot)]; ok {
			bad = append(bad, fmt.Sprintf("runs %s and %s: both in events slot %x", other, k, slot))
		}
		slots[string(slot)] = string(k)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var last []byte
	var seq uint64
	err = s.view("check database", func(tx *bolt.Tx) error {
		if sb := tx.Bucket(bucketRunEvents); sb != nil {
			seq = sb.Sequence()
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for slot, id := range slots {
		if n := binary.BigEndian.Uint64([]byte(slot)) >> 8; n > seq {
			bad = append(bad, fmt.Sprintf("run %s: events slot %d, past the slots handed out (%d)", id, n, seq))
		}
	}
	err = s.keySlices(bucketRunEvents, func(k []byte) {
		slot, _, ok := splitSharedKey(k)
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: key %x is no event key", bucketRunEvents, k))
		case slots[string(slot)] == "" && !bytes.Equal(slot, last):
			bad = append(bad, fmt.Sprintf("%s: events in slot %x, which no run has (from key %x)", bucketRunEvents, slot, k))
		}
		last = slot
	})
	if err != nil {
		return nil, nil, err
	}
	return ids, bad, nil
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
			b := tx.Bucket(name)
			if b == nil {
				return nil // the shared events bucket of a file of schema 1
			}
			c := b.Cursor()
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
	err = s.view("check database", func(tx *bolt.Tx) error {
		re, err := findEvents(tx, []byte(id))
		if err == nil && re.own && tx.Bucket(bucketRunSlots) != nil && tx.Bucket(bucketRunSlots).Get([]byte(id)) != nil {
			out = append(out, fmt.Sprintf("run %s: events both in a bucket of their own and in %s", id, bucketRunEvents))
		}
		return nil
	})
	if err != nil {
		return append(out, err.Error())
	}
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

// testHookSlice, set only by tests, is called between two slices of a bucket read by
// sliceEach, when no transaction of that read is open.
var testHookSlice = func(bucket string) {}

// sliceEach calls fn on every key and value of the top-level bucket name, in order, in slices
// of keySliceLen keys, each slice one short read (s.view) resuming after the last key, so a
// check never holds the writer for more than a slice. fn may read the other buckets in its
// slice's transaction: what it compares there is one state of the store, while what it
// carries from one slice to the next may have changed since. A missing bucket has no keys.
func (s *Store) sliceEach(name []byte, fn func(tx *bolt.Tx, k, v []byte) error) error {
	var from []byte
	for {
		n := 0
		var last []byte
		err := s.view("check database", func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			if b == nil {
				return nil
			}
			c := b.Cursor()
			var k, v []byte
			for k, v = c.Seek(from); k != nil && n < keySliceLen; k, v = c.Next() {
				n++
				last = k
				if err := fn(tx, k, v); err != nil {
					return err
				}
			}
			last = bytes.Clone(last)
			return nil
		})
		if err != nil || n < keySliceLen {
			return err
		}
		testHookSlice(string(name))
		from = append(last, 0) // the least key after it
	}
}

// checkIndexAndTasks checks every workflow index entry and head against its checksum, the
// entries point at runs of that workflow and are as many as the head counts, every run is
// indexed, and every task verifies, decodes and belongs to a stored run. It reads in slices
// (sliceEach): an entry is compared with its run record, a run with its entry, a task with its
// run, each in one slice's read; a head that disagrees with the entries counted across slices
// is counted again in one read of that workflow's keys (a commit between two slices may have
// added a run to it), and only a difference found there is reported.
func (s *Store) checkIndexAndTasks() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{} // runs indexed, for the records whose workflow id does not decode
	heads := map[string]uint64{}
	entries := map[string]uint64{}
	err := s.sliceEach(bucketWorkflows, func(tx *bolt.Tx, k, v []byte) error {
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
		if w, ok := recordWorkflowID([]byte(id), tx.Bucket(bucketRuns).Get([]byte(id))); !ok || w != wf {
			add("workflow index: %s -> run %s does not match a run record", wf, id)
		}
		seen[id] = true
		return nil
	})
	if err == nil {
		err = s.checkIndexHeads(heads, entries, add)
	}
	if err == nil {
		err = s.sliceEach(bucketRuns, func(tx *bolt.Tx, k, v []byte) error {
			if wf, ok := recordWorkflowID(k, v); ok {
				if tx.Bucket(bucketWorkflows).Get(workflowKey(wf, string(k))) == nil {
					add("run %s: missing from the workflow index", k)
				}
			} else if !seen[string(k)] { // the record check names what is wrong with it
				add("run %s: missing from the workflow index", k)
			}
			return nil
		})
	}
	if err == nil {
		err = s.sliceEach(bucketTasks, func(tx *bolt.Tx, k, v []byte) error {
			t, err := decodeTask(k, v)
			if err != nil {
				add("%v (repair rebuilds it from its run's history)", err)
			} else if tx.Bucket(bucketRuns).Get([]byte(t.RunID)) == nil {
				add("task %s: run %s does not exist", k, t.RunID)
			}
			return nil
		})
	}
	if err != nil {
		out = append(out, err.Error())
	}
	slices.Sort(out) // map order must not reach the report
	return out
}

// checkIndexHeads compares each workflow's head with the entries counted for it, counting a
// workflow again in one read when the two differ.
func (s *Store) checkIndexHeads(heads, entries map[string]uint64, add func(string, ...any)) error {
	for wf := range entries {
		if _, ok := heads[wf]; !ok {
			heads[wf] = ^uint64(0) // no head read: counted again below
		}
	}
	for wf, h := range heads {
		if n, ok := entries[wf]; ok && n == h {
			continue
		}
		head, hasHead, n, err := s.countWorkflow(wf)
		switch {
		case err != nil:
			return err
		case !hasHead && n > 0:
			add("workflow index: %q has no head", wf)
		case hasHead && n == 0:
			add("workflow index: %q counts %d run(s), none indexed", wf, head)
		case hasHead && head != n:
			add("workflow index: %q counts %d run(s), %d indexed", wf, head, n)
		}
	}
	return nil
}

// countWorkflow reads, in one read, workflow wf's head (hasHead false when it is missing or
// does not verify) and how many entries it has.
func (s *Store) countWorkflow(wf string) (head uint64, hasHead bool, n uint64, err error) {
	prefix := workflowPrefix(wf)
	err = s.view("check database", func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketWorkflows).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) == len(prefix) {
				h, err := readIndexHead(k, v)
				head, hasHead = h, err == nil
				continue
			}
			n++
		}
		return nil
	})
	return head, hasHead, n, err
}

// recordWorkflowID is the workflow id of a stored run record; false when there is no record
// or it does not verify and decode.
func recordWorkflowID(id, v []byte) (string, bool) {
	if v == nil {
		return "", false
	}
	body, err := unframe(id, v)
	if err != nil {
		return "", false
	}
	var r struct {
		WorkflowID string `json:"workflow_id"`
	}
	if json.Unmarshal(body, &r) != nil {
		return "", false
	}
	return r.WorkflowID, true
}

// splitWorkflowKey reverses workflowKey.
func splitWorkflowKey(k []byte) (wf, run string, ok bool) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) < n {
		return "", "", false
	}
	return string(k[w : w+int(n)]), string(k[w+int(n):]), true
}
