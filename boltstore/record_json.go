package boltstore

import (
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
)

// Every step's commit encodes its run's record (to compare with the stored one) and usually a
// task; json.Marshal's reflection was most of prepare's CPU. These write its bytes by hand
// (FuzzRunRecordJSON and FuzzTaskJSON hold them to json.Marshal); strings and raw data it would
// escape, and times it refuses, are left to json.Marshal itself.

// framedRun is frame(id, encodeRun(r)).
func framedRun(id []byte, r history.Run) ([]byte, error) {
	out, ok := appendRunJSON(make([]byte, frameHeader, frameHeader+256), r)
	if !ok {
		body, err := encodeRun(r)
		if err != nil {
			return nil, err
		}
		return frame(id, body), nil
	}
	return framed(id, out), nil
}

// framedTask is frame(id, json.Marshal(t)).
func framedTask(id []byte, t history.Task) ([]byte, error) {
	out, ok := appendTaskJSON(make([]byte, frameHeader, frameHeader+160+len(t.Data)), t)
	if !ok {
		body, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		return frame(id, body), nil
	}
	return framed(id, out), nil
}

// framed fills in the frame header of out, a header's room followed by the body.
func framed(key, out []byte) []byte {
	out[0] = frameV1
	binary.BigEndian.PutUint32(out[1:], recordSum(key, out[frameHeader:]))
	return out
}

// appendRunJSON appends json.Marshal(storedRun{Run: r}): the run's fields but last_seq.
func appendRunJSON(b []byte, r history.Run) ([]byte, bool) {
	b = append(b, `{"workflow_id":`...)
	b = history.AppendJSONString(b, r.WorkflowID)
	b = append(b, `,"run_id":`...)
	b = history.AppendJSONString(b, r.RunID)
	b = append(b, `,"name":`...)
	b = history.AppendJSONString(b, r.Name)
	b = append(b, `,"status":`...)
	b = history.AppendJSONString(b, r.Status)
	if r.ClosedReason != "" {
		b = append(b, `,"closed_reason":`...)
		b = history.AppendJSONString(b, r.ClosedReason)
	}
	b = append(b, `,"spec_file":`...)
	b = history.AppendJSONString(b, r.SpecFile)
	b = append(b, `,"spec_sha256":`...)
	b = history.AppendJSONString(b, r.SpecSHA256)
	if r.ParentRunID != "" {
		b = append(b, `,"parent_run_id":`...)
		b = history.AppendJSONString(b, r.ParentRunID)
	}
	if r.ParentStep != "" {
		b = append(b, `,"parent_step":`...)
		b = history.AppendJSONString(b, r.ParentStep)
	}
	b = append(b, `,"started_at":`...)
	b, ok := appendTimeJSON(b, r.StartedAt)
	if ok && !r.ClosedAt.IsZero() {
		b = append(b, `,"closed_at":`...)
		b, ok = appendTimeJSON(b, r.ClosedAt)
	}
	if ok && len(r.Search) > 0 {
		b, ok = appendMarshaled(append(b, `,"search":`...), r.Search)
	}
	if ok && len(r.SearchProblems) > 0 {
		b, ok = appendMarshaled(append(b, `,"search_problems":`...), r.SearchProblems)
	}
	return append(b, '}'), ok
}

// appendMarshaled appends json.Marshal(v): the search maps are few runs' and small, and
// json.Marshal's sorted keys keep a record's bytes the same while its values are.
func appendMarshaled(b []byte, v any) ([]byte, bool) {
	m, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return append(b, m...), true
}

// appendTaskJSON appends json.Marshal(t).
func appendTaskJSON(b []byte, t history.Task) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = history.AppendJSONString(b, t.ID)
	b = append(b, `,"run_id":`...)
	b = history.AppendJSONString(b, t.RunID)
	b = append(b, `,"kind":`...)
	b = history.AppendJSONString(b, string(t.Kind))
	b = append(b, `,"available_at":`...)
	b, ok := appendTimeJSON(b, t.AvailableAt)
	if ok && len(t.Data) > 0 {
		b = append(b, `,"data":`...)
		b, ok = history.AppendCompactRaw(b, t.Data)
	}
	if t.Dispatched {
		b = append(b, `,"dispatched":true`...)
	}
	return append(b, '}'), ok
}

// appendTimeJSON appends t as time.Time's MarshalJSON writes it; false for a time it refuses.
func appendTimeJSON(b []byte, t time.Time) ([]byte, bool) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return nil, false
	}
	return append(b, '"'), true
}
