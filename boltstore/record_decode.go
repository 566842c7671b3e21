package boltstore

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
)

// A start over many open runs reads every run record and every task (engine.Resume), and
// json.Unmarshal's reflection was most of that read. These read the layout appendRunJSON and
// appendTaskJSON write (their keys in their order, no space, strings without escapes) by hand;
// anything else, valid or not, goes to json.Unmarshal, so the result and the error are always
// its own (FuzzDecodeRunRecord and FuzzDecodeTask hold them to that).

// decodeRunJSON decodes a run record's body as json.Unmarshal into a zero history.Run does;
// the fields many records repeat take their strings from shared (nil: none shared).
func decodeRunJSON(b []byte, r *history.Run, shared sharedStrings) error {
	if runLayout(b, r, shared) {
		return nil
	}
	*r = history.Run{}
	return json.Unmarshal(b, r)
}

// decodeTaskJSON decodes a task record's body as json.Unmarshal into a zero history.Task does.
func decodeTaskJSON(b []byte, t *history.Task) error {
	if taskLayout(b, t) {
		return nil
	}
	*t = history.Task{}
	return json.Unmarshal(b, t)
}

// runLayout reads b when it has appendRunJSON's layout without search values (few runs have
// them: those go to json.Unmarshal), reporting whether it did.
func runLayout(b []byte, r *history.Run, shared sharedStrings) bool {
	p := recordReader{b: b, shared: shared}
	ok := p.key(`{"workflow_id":`) && p.str(&r.WorkflowID) &&
		p.key(`,"run_id":`) && p.str(&r.RunID) &&
		p.key(`,"name":`) && p.common(&r.Name) &&
		p.key(`,"status":`) && p.common(&r.Status) &&
		(!p.key(`,"closed_reason":`) || p.common(&r.ClosedReason)) &&
		p.key(`,"spec_file":`) && p.common(&r.SpecFile) &&
		p.key(`,"spec_sha256":`) && p.common(&r.SpecSHA256) &&
		(!p.key(`,"parent_run_id":`) || p.str(&r.ParentRunID)) &&
		(!p.key(`,"parent_step":`) || p.common(&r.ParentStep)) &&
		p.key(`,"started_at":`) && p.time(&r.StartedAt) &&
		(!p.key(`,"closed_at":`) || p.time(&r.ClosedAt)) &&
		p.key("}") && p.i == len(b)
	return ok
}

// dispatchedTail is how appendTaskJSON ends a dispatched task.
const dispatchedTail = `,"dispatched":true}`

// taskLayout reads b when it has appendTaskJSON's layout with an object as data, reporting
// whether it did.
func taskLayout(b []byte, t *history.Task) bool {
	p := recordReader{b: b}
	var kind string
	if !(p.key(`{"id":`) && p.str(&t.ID) &&
		p.key(`,"run_id":`) && p.str(&t.RunID) &&
		p.key(`,"kind":`) && p.str(&kind) &&
		p.key(`,"available_at":`) && p.time(&t.AvailableAt)) {
		return false
	}
	t.Kind = history.TaskKind(kind)
	end := len(b) - 1 // the closing brace
	if bytes.HasSuffix(b[p.i:], []byte(dispatchedTail)) {
		t.Dispatched, end = true, len(b)-len(dispatchedTail)
	}
	if p.key(`,"data":`) {
		// The rest up to the end: a RawMessage holds a value's bytes as they are, so it must be
		// one valid object with nothing around it. An object ends in a brace, so the tail of a
		// dispatched task cannot be the end of data's own text.
		if end <= p.i || b[p.i] != '{' || b[end-1] != '}' || !json.Valid(b[p.i:end]) {
			return false
		}
		t.Data = bytes.Clone(b[p.i:end])
		p.i = end
	}
	if t.Dispatched {
		return p.i == len(b)-len(dispatchedTail)
	}
	return p.key("}") && p.i == len(b)
}

// recordReader reads a record's JSON in the order its encoder wrote it.
type recordReader struct {
	b      []byte
	i      int
	shared sharedStrings
}

// sharedStrings hands out one string for equal bytes, for the fields many run records repeat
// (a workflow's name, its spec file and hash, a status): a scan of 100,000 runs of a few
// workflows then holds each once, not once a record, and what Resume registers keeps them so.
// It keeps at most sharedMax strings of at most sharedLongest bytes; nil shares none.
type sharedStrings map[string]string

const (
	sharedMax     = 4096
	sharedLongest = 512
)

func (m sharedStrings) get(b []byte) string {
	if s, ok := m[string(b)]; ok {
		return s
	}
	s := string(b)
	if m != nil && len(m) < sharedMax && len(b) <= sharedLongest {
		m[s] = s
	}
	return s
}

// key skips k when b holds it next.
func (p *recordReader) key(k string) bool {
	if len(p.b)-p.i >= len(k) && string(p.b[p.i:p.i+len(k)]) == k {
		p.i += len(k)
		return true
	}
	return false
}

// str reads a string without escapes or control bytes, in valid UTF-8 (its bytes are its
// value then).
func (p *recordReader) str(s *string) bool {
	end, ok := history.PlainJSONString(p.b, p.i)
	if !ok {
		return false
	}
	*s = string(p.b[p.i+1 : end-1])
	p.i = end
	return true
}

// common is str for a field many records repeat: its string comes from p.shared.
func (p *recordReader) common(s *string) bool {
	end, ok := history.PlainJSONString(p.b, p.i)
	if !ok {
		return false
	}
	*s = p.shared.get(p.b[p.i+1 : end-1])
	p.i = end
	return true
}

// time reads a plain string as time.Time's UnmarshalJSON reads it, as json.Unmarshal has it do.
func (p *recordReader) time(t *time.Time) bool {
	end, ok := history.PlainJSONString(p.b, p.i)
	if !ok || t.UnmarshalJSON(p.b[p.i:end]) != nil {
		return false
	}
	p.i = end
	return true
}
