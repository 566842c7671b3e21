package history

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// JSON encodes s exactly as json.Marshal does (TestPayloadJSON holds it to that): once for
// each activity a run schedules.
func (s ActivitySchedule) JSON() (json.RawMessage, error) {
	b := make([]byte, 0, 144+len(s.Plugin)+len(s.Activity)+len(s.Input)) // the names and numbers at their longest
	b = append(b, `{"plugin":`...)
	b = appendString(b, s.Plugin)
	b = append(b, `,"activity":`...)
	b = appendString(b, s.Activity)
	b = append(b, `,"input":`...)
	b, ok := appendRaw(b, s.Input)
	if !ok {
		return json.Marshal(s)
	}
	b = append(b, `,"tries":`...)
	b = strconv.AppendInt(b, int64(s.Tries), 10)
	if s.TimeoutMS != 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, s.TimeoutMS, 10)
	}
	if s.HeartbeatTimeout != 0 {
		b = append(b, `,"heartbeat_timeout_ms":`...)
		b = strconv.AppendInt(b, s.HeartbeatTimeout, 10)
	}
	return append(b, '}'), nil
}

// JSON encodes r exactly as json.Marshal does (TestPayloadJSON, FuzzActivityResultJSON): once
// for each output a plugin returns, which it validates and compacts as json.Marshal would.
func (r ActivityResult) JSON() (json.RawMessage, error) {
	b := make([]byte, 0, 32+len(r.Output)+len(r.PluginSHA256))
	b = append(b, `{"output":`...)
	b, ok := appendRaw(b, r.Output)
	if !ok {
		return json.Marshal(r)
	}
	if r.PluginSHA256 != "" {
		b = append(b, `,"plugin_sha256":`...)
		b = appendString(b, r.PluginSHA256)
	}
	return append(b, '}'), nil
}

// appendRaw is AppendCompactRaw for a field of a struct: json.Marshal writes a nil
// RawMessage as null.
func appendRaw(b []byte, raw json.RawMessage) ([]byte, bool) {
	if raw == nil {
		return append(b, "null"...), true
	}
	return AppendCompactRaw(b, raw)
}

// AppendCompactRaw appends raw as json.Marshal writes a RawMessage (compacted), for the
// store's record encoders written by hand. It reports false, with b as it was, when raw is not
// valid JSON or json.Marshal would escape it further (<, >, &, U+2028, U+2029): the caller then
// leaves the whole value to json.Marshal, for its bytes or its error.
func AppendCompactRaw(b []byte, raw json.RawMessage) ([]byte, bool) {
	if htmlEscaped(raw) {
		return b, false
	}
	if compactValid(raw) { // what the store and the engine write: compact already
		return append(b, raw...), true
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b, false
	}
	return buf.Bytes(), true
}

// htmlEscaped says whether raw holds a byte sequence json.Marshal escapes in a RawMessage:
// <, >, &, or U+2028 / U+2029 (E2 80 A8 / E2 80 A9 in UTF-8). One pass over the bytes, where
// bytes.ContainsAny with those runes in its set decodes raw rune by rune.
func htmlEscaped(raw []byte) bool {
	for i, c := range raw {
		switch c {
		case '<', '>', '&':
			return true
		case 0xE2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9) {
				return true
			}
		}
	}
	return false
}
