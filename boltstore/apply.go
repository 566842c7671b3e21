package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// batchView is what the commits applied so far in one transaction have made of each run's last
// seq, so each commit of a batch is validated against the history as the ones before it left
// it, exactly as if it had been committed alone.
type batchView struct {
	tx   *bolt.Tx
	last map[string]uint64 // made by the first accept that a later commit may read
}

func newBatchView(tx *bolt.Tx) *batchView { return &batchView{tx: tx} }

// lastSeq is the seq of the run's last event. It comes from the events themselves, not from the
// run record, since the events are what a new one must follow.
func (v *batchView) lastSeq(runID []byte) (uint64, error) {
	if s, ok := v.last[string(runID)]; ok {
		return s, nil
	}
	return lastStoredSeq(v.tx, runID)
}

// lastStoredSeq is the seq of the run's last stored event, 0 when it has none.
func lastStoredSeq(tx *bolt.Tx, runID []byte) (uint64, error) {
	re, err := findEvents(tx, runID)
	if err != nil {
		return 0, err
	}
	k, _, err := re.last()
	if err != nil {
		return 0, err
	}
	if k == nil {
		return 0, nil
	}
	return keySeq(k)
}

// validate checks every run update of p against the view; it writes nothing.
func (v *batchView) validate(p *prepared) error {
	// A run may appear twice in one commit: it then follows its own update before. A step's
	// commit has one run, searched without a map; a fan-out's many, by one.
	var seen map[string]uint64
	if len(p.runs) > 8 {
		seen = make(map[string]uint64, len(p.runs))
	}
	for i, r := range p.runs {
		var prev uint64
		var ok bool
		if seen != nil {
			prev, ok = seen[string(r.id)]
		} else {
			prev, ok = latestSeq(p.runs[:i], r.id)
		}
		if !ok {
			var err error
			if prev, err = v.lastSeq(r.id); err != nil {
				return fmt.Errorf("run %s: %w", r.id, err)
			}
		}
		if err := history.CheckAppend(prev, r.u); err != nil {
			return err
		}
		if seen != nil {
			seen[string(r.id)] = r.u.Run.LastSeq
		}
	}
	return nil
}

// latestSeq is the last seq of the latest update of run id among runs.
func latestSeq(runs []preparedRun, id []byte) (uint64, bool) {
	for i := len(runs) - 1; i >= 0; i-- {
		if bytes.Equal(runs[i].id, id) {
			return runs[i].u.Run.LastSeq, true
		}
	}
	return 0, false
}

// accept records the new last seqs of an applied commit.
func (v *batchView) accept(p *prepared) {
	if v.last == nil {
		v.last = make(map[string]uint64, len(p.runs))
	}
	for _, r := range p.runs {
		v.last[string(r.id)] = r.u.Run.LastSeq
	}
}

// apply writes a validated commit into tx.
func apply(tx *bolt.Tx, p *prepared) error {
	runs, wfs := tx.Bucket(bucketRuns), tx.Bucket(bucketWorkflows)
	for _, r := range p.runs {
		// Most commits append events and leave the record as it is: then it is not rewritten,
		// which spares a page write in every step's commit. A damaged record differs, and is
		// rewritten.
		if old := runs.Get(r.id); !bytes.Equal(old, r.record) {
			if err := reindexSearch(tx, old, r); err != nil {
				return fmt.Errorf("run %s: %w", r.id, err)
			}
			if err := reindex(wfs, old, r); err != nil {
				return fmt.Errorf("run %s: %w", r.id, err)
			}
			if err := recount(tx, old, r.id, r.record); err != nil {
				return fmt.Errorf("run %s: %w", r.id, err)
			}
			if err := runs.Put(r.id, r.record); err != nil {
				return fmt.Errorf("run %s: %w", r.id, err)
			}
		}
		if err := noteChange(tx, r.id, false); err != nil {
			return fmt.Errorf("run %s: %w", r.id, err)
		}
		if err := appendEvents(tx, r.id, r.events); err != nil {
			return fmt.Errorf("run %s: %w", r.id, err)
		}
	}
	tasks := tx.Bucket(bucketTasks)
	for _, id := range p.deletes {
		if err := tasks.Delete(id); err != nil {
			return fmt.Errorf("task %s: %w", id, err)
		}
	}
	for _, t := range p.puts {
		if err := tasks.Put(t.k, t.v); err != nil {
			return fmt.Errorf("task %s: %w", t.k, err)
		}
	}
	return nil
}

// reindex keeps the workflow index pointing at the run's current workflow id; old is the
// stored record, nil for a new run. A damaged entry is framed again on the way.
func reindex(wfs *bolt.Bucket, old []byte, r preparedRun) error {
	if old != nil {
		var prev struct {
			WorkflowID string `json:"workflow_id"`
		}
		// A damaged record's workflow id is a guess; a stale entry left by a wrong guess is
		// what wend check reports.
		body, _ := unframe(r.id, old)
		sound := body != nil
		if body == nil && len(old) > frameHeader {
			body = old[frameHeader:]
		}
		var err error
		if !sound || len(r.record) < frameHeader || !sameWorkflowPrefix(body, r.record[frameHeader:]) {
			err = json.Unmarshal(body, &prev)
		} else {
			prev.WorkflowID = r.u.Run.WorkflowID
		}
		if err == nil && prev.WorkflowID == r.u.Run.WorkflowID {
			if v := wfs.Get(r.wfKey); v != nil {
				if readIndexEntry(r.wfKey, v) == nil {
					return nil // already indexed
				}
			}
		} else if err == nil {
			if err := wfs.Delete(workflowKey(prev.WorkflowID, string(r.id))); err != nil {
				return err
			}
			if err := countIndex(wfs, prev.WorkflowID, -1); err != nil {
				return err
			}
		}
	}
	delta := 0 // a damaged entry is framed again; the head is made sound too
	if wfs.Get(r.wfKey) == nil {
		delta = 1
	}
	if err := wfs.Put(r.wfKey, indexEntry(r.wfKey)); err != nil {
		return err
	}
	return countIndex(wfs, r.u.Run.WorkflowID, delta)
}

// countIndex moves the head of a workflow's index entries by delta, after the entry was put or
// deleted. A workflow without a sound head (a damaged one) is counted afresh, and its damaged
// entries are framed again.
func countIndex(wfs *bolt.Bucket, workflowID string, delta int) error {
	prefix := workflowPrefix(workflowID)
	if v := wfs.Get(prefix); v != nil {
		if n, err := readIndexHead(prefix, v); err == nil && (delta > 0 || n > 0) {
			return wfs.Put(prefix, indexHead(prefix, uint64(int64(n)+int64(delta))))
		}
	}
	var n uint64
	var bad [][]byte
	c := wfs.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) == len(prefix) {
			continue // the head
		}
		n++
		if readIndexEntry(k, v) != nil {
			bad = append(bad, bytes.Clone(k))
		}
	}
	for _, k := range bad {
		if err := wfs.Put(k, indexEntry(k)); err != nil {
			return err
		}
	}
	if n == 0 {
		return wfs.Delete(prefix)
	}
	return wfs.Put(prefix, indexHead(prefix, n))
}

// sameWorkflowPrefix reports whether the sound stored record body old starts with the workflow
// id that begins rec, the record encodeRun made for the commit: both are json.Marshal of
// storedRun, whose first field is the workflow id, so equal openings up to the comma after it
// name the same workflow. A run's closing rewrites its record, and finding the workflow id
// this way spares decoding the old record whole on every close; anything else is decoded.
func sameWorkflowPrefix(old, rec []byte) bool {
	const open = `{"workflow_id":"`
	if !bytes.HasPrefix(rec, []byte(open)) {
		return false
	}
	// The id's closing quote is the first quote not escaped: json.Marshal escapes a quote in a
	// string as \" and a backslash as \\, so a quote after an odd run of backslashes is inside.
	for i := len(open); i < len(rec); i++ {
		switch rec[i] {
		case '\\':
			i++ // the escaped byte
		case '"':
			n := i + 2 // through the comma after the closing quote
			return n <= len(rec) && rec[i+1] == ',' && len(old) >= n && bytes.Equal(old[:n], rec[:n])
		}
	}
	return false
}
