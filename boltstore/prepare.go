package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
)

// prepared is a history.Commit encoded into the exact keys and values to write. Encoding and
// every check that does not need the stored history run in the caller's goroutine, before the
// commit is queued: the writer then only validates sequence numbers and puts bytes, so a bad
// commit cannot fail half-way through a shared transaction, and encoding work of concurrent
// callers runs in parallel instead of inside the single writer.
type prepared struct {
	runs    []preparedRun
	puts    []kv // tasks
	deletes [][]byte
}

type preparedRun struct {
	u      history.RunUpdate
	id     []byte
	wfKey  []byte // index key
	record []byte // the run record (encodeRun), framed (record.go)
	events []kv   // seq key -> framed event
}

type kv struct{ k, v []byte }

func prepare(c history.Commit) (*prepared, error) {
	p := &prepared{runs: make([]preparedRun, 0, len(c.Runs))}
	for _, u := range c.Runs {
		r, err := prepareRun(u)
		if err != nil {
			return nil, err
		}
		p.runs = append(p.runs, r)
	}
	for _, t := range c.PutTasks {
		if err := checkKey("task", t.ID); err != nil {
			return nil, err
		}
		k := []byte(t.ID)
		v, err := framedTask(k, t)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		p.puts = append(p.puts, kv{k, v})
	}
	for _, id := range c.DeleteTasks {
		if err := checkKey("task", id); err != nil {
			return nil, err
		}
		p.deletes = append(p.deletes, []byte(id))
	}
	return p, nil
}

func prepareRun(u history.RunUpdate) (preparedRun, error) {
	id := u.Run.RunID
	if err := checkKey("run", id); err != nil {
		return preparedRun{}, err
	}
	if err := checkKey("workflow", u.Run.WorkflowID); err != nil {
		return preparedRun{}, fmt.Errorf("run %s: %w", id, err)
	}
	key := []byte(id)
	rec, err := framedRun(key, u.Run)
	if err != nil {
		return preparedRun{}, fmt.Errorf("run %s: %w", id, err)
	}
	r := preparedRun{u: u, id: key, wfKey: workflowKey(u.Run.WorkflowID, id), record: rec}
	r.events = make([]kv, 0, len(u.Events))
	for _, e := range u.Events {
		v, err := history.EncodeEvent(e)
		if err != nil {
			return preparedRun{}, fmt.Errorf("run %s: %w", id, err)
		}
		r.events = append(r.events, kv{seqKey(e.Seq), v})
	}
	return r, nil
}

// checkKey rejects ids bbolt cannot store as keys.
func checkKey(what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%s with an empty id", what)
	case len(id) > bolt.MaxKeySize/2: // halved: the workflow index key holds two ids
		return fmt.Errorf("%s id of %d bytes is too long", what, len(id))
	case what == "run" && id[0] == purgeMark: // the change feed marks a purge so
		return fmt.Errorf("run id %q begins with a 0 byte", id)
	}
	return nil
}

// seqKey orders events by seq under bytewise key order.
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func keySeq(k []byte) (uint64, error) {
	if len(k) != 8 {
		return 0, errors.New("event key is not 8 bytes")
	}
	return binary.BigEndian.Uint64(k), nil
}

// workflowKey is the index key of a run under its workflow. The length prefix keeps the
// prefix of workflow "a" from matching runs of workflow "ab".
func workflowKey(workflowID, runID string) []byte {
	k := workflowPrefix(workflowID)
	return append(k, runID...)
}

func workflowPrefix(workflowID string) []byte {
	k := binary.AppendUvarint(nil, uint64(len(workflowID)))
	return append(k, workflowID...)
}
