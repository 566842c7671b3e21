package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
)

// A log record's payload is the commits one bbolt transaction applied, as prepare encoded them,
// so replaying it puts the same bytes under the same keys:
//
//	batch  = uvarint(commits) commit*
//	commit = uvarint(runs) run* uvarint(puts) (bytes key, bytes value)* uvarint(deletes) bytes*
//	run    = bytes(run id) bytes(workflow id) uvarint(last seq) bytes(record)
//	         uvarint(events) (uvarint(seq) bytes(value))*
//	bytes  = uvarint(length) | the bytes

// encodeBatch is the payload of the accepted commits of a batch.
func encodeBatch(b []byte, ps []*prepared) []byte {
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(len(p.runs)))
		for _, r := range p.runs {
			b = appendBytes(b, r.id)
			b = appendBytes(b, []byte(r.u.Run.WorkflowID))
			b = binary.AppendUvarint(b, r.u.Run.LastSeq)
			b = appendBytes(b, r.record)
			b = binary.AppendUvarint(b, uint64(len(r.events)))
			for i, e := range r.events {
				b = binary.AppendUvarint(b, r.u.Events[i].Seq)
				b = appendBytes(b, e.v)
			}
		}
		b = binary.AppendUvarint(b, uint64(len(p.puts)))
		for _, t := range p.puts {
			b = appendBytes(b, t.k)
			b = appendBytes(b, t.v)
		}
		b = binary.AppendUvarint(b, uint64(len(p.deletes)))
		for _, id := range p.deletes {
			b = appendBytes(b, id)
		}
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

var errBatch = errors.New("malformed commit batch")

// batchReader decodes a payload; the first error sticks.
type batchReader struct {
	b   []byte
	err error
}

func (r *batchReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBatch
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count is a uvarint bounding a number of items, each at least one byte long.
func (r *batchReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errBatch
		return 0
	}
	return int(n)
}

func (r *batchReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errBatch
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// decodeBatch turns a payload back into the commits it holds, as prepare made them: enough of
// each history.RunUpdate (ids, last seq, event seqs) for validation and the workflow index.
// The run's other fields (its search values) are not decoded: apply reads them from the
// record's bytes, live and replayed alike.
func decodeBatch(payload []byte) ([]*prepared, error) {
	r := &batchReader{b: payload}
	var out []*prepared
	for range r.count() {
		p := &prepared{}
		for range r.count() {
			id, wf, last := r.bytes(), r.bytes(), r.uvarint()
			pr := preparedRun{id: id, wfKey: workflowKey(string(wf), string(id)), record: r.bytes()}
			pr.u.Run = history.Run{RunID: string(id), WorkflowID: string(wf), LastSeq: last}
			for range r.count() {
				seq := r.uvarint()
				pr.u.Events = append(pr.u.Events, history.Event{Seq: seq, Type: "(from the log)"})
				pr.events = append(pr.events, kv{seqKey(seq), r.bytes()})
			}
			p.runs = append(p.runs, pr)
		}
		for range r.count() {
			p.puts = append(p.puts, kv{r.bytes(), r.bytes()})
		}
		for range r.count() {
			p.deletes = append(p.deletes, r.bytes())
		}
		out = append(out, p)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes left over", errBatch, len(r.b))
	}
	return out, r.err
}
