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
	if bytes.ContainsAny(s.Input, "<>&\u2028\u2029") {
		return json.Marshal(s)
	}
	b := make([]byte, 0, 96+len(s.Plugin)+len(s.Activity)+len(s.Input))
	b = append(b, `{"plugin":`...)
	b = appendString(b, s.Plugin)
	b = append(b, `,"activity":`...)
	b = appendString(b, s.Activity)
	b = append(b, `,"input":`...)
	if s.Input == nil {
		b = append(b, "null"...)
	} else {
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, s.Input); err != nil {
			return json.Marshal(s) // the error json.Marshal gives
		}
		b = buf.Bytes()
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
