package history

import (
	"bytes"
	"encoding/json"
)

// JSON encodes s (json.Marshal).
func (s ActivitySchedule) JSON() (json.RawMessage, error) { return json.Marshal(s) }

// JSON encodes r (json.Marshal).
func (r ActivityResult) JSON() (json.RawMessage, error) { return json.Marshal(r) }

// AppendCompactRaw appends raw as json.Marshal writes a RawMessage (compacted), for the
// store's record encoders written by hand. It reports false, with b as it was, when raw is not
// valid JSON or json.Marshal would escape it further (<, >, &, U+2028, U+2029): the caller then
// leaves the whole value to json.Marshal, for its bytes or its error.
func AppendCompactRaw(b []byte, raw json.RawMessage) ([]byte, bool) {
	if bytes.ContainsAny(raw, "<>&\u2028\u2029") {
		return b, false
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b, false
	}
	return buf.Bytes(), true
}
