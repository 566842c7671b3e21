package history

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// JSON encodes s exactly as json.Marshal does (TestActivityScheduleJSON and
// FuzzActivityScheduleJSON hold it to that), without its reflection: every activity step
// encodes one. Input is validated and compacted as json.Marshal does a RawMessage; input
// that json.Marshal would escape further is left to it.
func (s ActivitySchedule) JSON() (json.RawMessage, error) {
	b := make([]byte, 0, 96+len(s.Plugin)+len(s.Activity)+len(s.Input))
	b = append(b, `{"plugin":`...)
	b = appendString(b, s.Plugin)
	b = append(b, `,"activity":`...)
	b = appendString(b, s.Activity)
	b = append(b, `,"input":`...)
	if s.Input == nil {
		b = append(b, "null"...)
	} else {
		var ok bool
		if b, ok = AppendCompactRaw(b, s.Input); !ok {
			return json.Marshal(s) // its error, or its escaping
		}
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

// AppendCompactRaw appends raw as json.Marshal writes a RawMessage (compacted), for payload
// encoders written by hand. It reports false, with b as it was, when raw is not valid JSON or
// json.Marshal would escape it further (<, >, &, U+2028, U+2029): the caller then leaves the
// whole value to json.Marshal, for its bytes or its error.
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

// JSON encodes r exactly as json.Marshal does (TestActivityResultJSON and
// FuzzActivityResultJSON hold it to that), without its reflection: every step's outcome is one.
// Output json.Marshal would refuse or escape further is left to it, for its error or bytes.
func (r ActivityResult) JSON() (json.RawMessage, error) {
	b := make([]byte, 0, 32+len(r.Output)+len(r.PluginSHA256))
	b = append(b, `{"output":`...)
	if r.Output == nil {
		b = append(b, "null"...)
	} else {
		var ok bool
		if b, ok = AppendCompactRaw(b, r.Output); !ok {
			return json.Marshal(r)
		}
	}
	if r.PluginSHA256 != "" {
		b = append(b, `,"plugin_sha256":`...)
		b = appendString(b, r.PluginSHA256)
	}
	return append(b, '}'), nil
}
