package history

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeEventJSON decodes an event's JSON as json.Unmarshal into an Event does. The layout
// AppendJSON writes (its keys in its order, no space, strings without escapes, an object as
// data) is read by hand; anything else, valid or not, goes to json.Unmarshal, so the result
// and the error are always its own (FuzzDecodeEventJSON holds it to that). Every event of a
// history is decoded when a run is rebuilt, and json.Unmarshal took 7-9 µs an event.
func decodeEventJSON(b []byte, e *Event) error {
	if eventLayout(b, e) {
		return nil
	}
	*e = Event{}
	return json.Unmarshal(b, e)
}

// eventLayout reads b when it has AppendJSON's layout, reporting whether it did.
func eventLayout(b []byte, e *Event) bool {
	r := layoutReader{b: b}
	if !r.key(`{"seq":`) {
		return false
	}
	seq, ok := r.uint()
	if !ok || !r.key(`,"type":`) {
		return false
	}
	typ, ok := r.str()
	if !ok || !r.key(`,"time":`) {
		return false
	}
	start := r.i
	if _, ok := r.str(); !ok || e.Time.UnmarshalJSON(b[start:r.i]) != nil {
		return false
	}
	e.Seq, e.Type = seq, EventType(typ)
	if r.key(`,"step":`) {
		if e.Step, ok = r.str(); !ok {
			return false
		}
	}
	if r.key(`,"activity_execution_id":`) {
		if e.ActivityExecutionID, ok = r.str(); !ok {
			return false
		}
	}
	if r.key(`,"attempt":`) {
		n, ok := r.int()
		if !ok {
			return false
		}
		e.Attempt = n
	}
	if r.key(`,"data":`) {
		// The rest up to the closing brace: a RawMessage holds a value's bytes as they are,
		// so it must be one valid object with nothing around it.
		end := len(b) - 1
		if end <= r.i || b[r.i] != '{' || b[end] != '}' || b[end-1] != '}' || !json.Valid(b[r.i:end]) {
			return false
		}
		e.Data = bytes.Clone(b[r.i:end])
		r.i = end
	}
	return r.key("}") && r.i == len(b)
}

type layoutReader struct {
	b []byte
	i int
}

func (r *layoutReader) key(k string) bool {
	if len(r.b)-r.i >= len(k) && string(r.b[r.i:r.i+len(k)]) == k {
		r.i += len(k)
		return true
	}
	return false
}

// str reads a string without escapes or control bytes, in valid UTF-8 (its bytes are its
// value then).
func (r *layoutReader) str() (string, bool) {
	end, ok := PlainJSONString(r.b, r.i)
	if !ok {
		return "", false
	}
	s := string(r.b[r.i+1 : end-1])
	r.i = end
	return s, true
}

// PlainJSONString reports whether b holds at i a JSON string without escapes or control bytes,
// in valid UTF-8, and where it ends (past its closing quote). Such a string's value is its bytes
// between the quotes, as encoding/json decodes it; hand-written decoders of wend's own JSON use
// this to take the quick path and leave any other string to encoding/json.
func PlainJSONString(b []byte, i int) (end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	start, ascii := i+1, true
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(b[start:j]) {
				return 0, false
			}
			return j + 1, true
		case c == '\\' || c < 0x20:
			return 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, false
}

// digits reads JSON's integer digits: 0, or no leading zero.
func (r *layoutReader) digits() (string, bool) {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	d := r.b[start:r.i]
	if len(d) == 0 || (d[0] == '0' && len(d) > 1) {
		return "", false
	}
	if r.i < len(r.b) && (r.b[r.i] == '.' || r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		return "", false // a fraction or exponent: encoding/json's to judge
	}
	return string(d), true
}

func (r *layoutReader) uint() (uint64, bool) {
	d, ok := r.digits()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(d, 10, 64)
	return n, err == nil
}

func (r *layoutReader) int() (int, bool) {
	start := r.i
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	if _, ok := r.digits(); !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(r.b[start:r.i]), 10, strconv.IntSize)
	return int(n), err == nil
}
