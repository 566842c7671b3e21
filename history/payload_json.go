package history

import "encoding/json"

// JSON encodes s (json.Marshal).
func (s ActivitySchedule) JSON() (json.RawMessage, error) { return json.Marshal(s) }

// JSON encodes r (json.Marshal).
func (r ActivityResult) JSON() (json.RawMessage, error) { return json.Marshal(r) }
