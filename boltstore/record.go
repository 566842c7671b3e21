package boltstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/wendflow/wend/history"
)

// Run records, task records and workflow index entries are framed as events are: a checksum
// over what they say, verified on every read, so a flipped bit is an error naming the record,
// never a silently different run, task or lookup.
//
//	frame = 0x01 | CRC-32C(key | body), big-endian | body
//
// The key is covered too: a record that moved to another key (a flip in the key's bytes) no
// longer matches its checksum. A record starting with any other byte than 0x01 is damage.
const frameV1 = 0x01

// frameHeader is the bytes before the body.
const frameHeader = 5

var (
	// errFrame is wrapped by the error of a record whose checksum or frame is wrong.
	errFrame   = errors.New("checksum mismatch: the record is damaged")
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// frame returns the stored bytes of body under key.
func frame(key, body []byte) []byte {
	out := make([]byte, frameHeader, frameHeader+len(body))
	out[0] = frameV1
	binary.BigEndian.PutUint32(out[1:], recordSum(key, body))
	return append(out, body...)
}

func recordSum(key, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, body)
}

// unframe verifies a stored record and returns its body, which aliases v.
func unframe(key, v []byte) (body []byte, err error) {
	if len(v) < frameHeader || v[0] != frameV1 {
		return nil, fmt.Errorf("%w (unknown frame %x)", errFrame, v[:min(len(v), 1)])
	}
	body = v[frameHeader:]
	if recordSum(key, body) != binary.BigEndian.Uint32(v[1:]) {
		return nil, errFrame
	}
	return body, nil
}

// Workflow index values. An entry (workflowKey) frames an empty body; the head of a workflow
// (workflowPrefix alone, which sorts before its entries) frames the number of entries as a
// uvarint, so a lookup that finds fewer entries than the head counts knows one was lost or
// moved.

// indexEntry is the stored value of the index entry under key k.
func indexEntry(k []byte) []byte { return frame(k, nil) }

// indexHead is the stored value of a workflow's head counting n entries.
func indexHead(prefix []byte, n uint64) []byte {
	return frame(prefix, binary.AppendUvarint(nil, n))
}

// readIndexEntry verifies an entry's value.
func readIndexEntry(k, v []byte) error {
	body, err := unframe(k, v)
	if err == nil && len(body) != 0 {
		err = fmt.Errorf("%w (an index entry holds %d bytes)", errFrame, len(v))
	}
	return err
}

// readIndexHead verifies a head's value and returns its count.
func readIndexHead(prefix, v []byte) (uint64, error) {
	body, err := unframe(prefix, v)
	if err != nil {
		return 0, err
	}
	n, w := binary.Uvarint(body)
	if w <= 0 || w != len(body) {
		return 0, fmt.Errorf("%w (a workflow index head holds %x)", errFrame, v)
	}
	return n, nil
}

// storedRun is the run record as stored: a history.Run without its last seq, which is the seq of
// the run's last event and is read from there (decodeRun). Kept out, it cannot disagree with the
// events, and a commit that only appends events leaves the record's bytes unchanged, so apply
// need not rewrite it. The field below shadows the embedded Run's (encoding/json drops the
// deeper of two fields of one name) and, nil, is omitted.
type storedRun struct {
	history.Run
	LastSeq *struct{} `json:"last_seq,omitempty"`
}

// encodeRun is the body of a run's record.
func encodeRun(r history.Run) ([]byte, error) {
	return json.Marshal(storedRun{Run: r})
}
