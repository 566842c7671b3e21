package history

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// AppendJSONString appends s as a JSON string exactly as encoding/json writes it, for
// the store's record encoders written by hand (boltstore).
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }

// appendString appends s as a JSON string the way encoding/json does. Plain printable ASCII is
// copied; anything encoding/json would escape (quotes, backslashes, controls, <, >, &, non-ASCII
// including invalid UTF-8 and U+2028/9) is left to encoding/json itself.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendJSON appends e encoded exactly as json.Marshal encodes it (TestEventAppendJSON and
// FuzzEventAppendJSON hold it to that). Every event is encoded once on its way to the store.
func (e Event) AppendJSON(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"type":`...)
	b = appendString(b, string(e.Type))
	b = append(b, `,"time":"`...)
	b, err := e.Time.AppendText(b) // MarshalJSON's text, without its allocation
	if err != nil {
		_, err = e.Time.MarshalJSON() // its own error
		return nil, err
	}
	b = append(b, '"')
	if e.Step != "" {
		b = append(b, `,"step":`...)
		b = appendString(b, e.Step)
	}
	if e.ActivityExecutionID != "" {
		b = append(b, `,"activity_execution_id":`...)
		b = appendString(b, e.ActivityExecutionID)
	}
	if e.Attempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	if len(e.Data) > 0 {
		// encoding/json validates a RawMessage and compacts it, escaping <, >, & and U+2028/9;
		// Compact does the first two, and anything needing the escapes goes to json.Marshal.
		if htmlEscaped(e.Data) {
			out, err := json.Marshal(e)
			if err != nil {
				return nil, err
			}
			return append(b[:start], out...), nil
		}
		b = append(b, `,"data":`...)
		if compactValid(e.Data) { // the common case: data encoded by json.Marshal or by hand
			return append(append(b, e.Data...), '}'), nil
		}
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, e.Data); err != nil {
			_, err = json.Marshal(e) // the same error json.Marshal gives
			return nil, err
		}
		b = buf.Bytes()
	}
	return append(b, '}'), nil
}
