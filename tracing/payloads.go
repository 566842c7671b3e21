package tracing

import (
	"bytes"
	"encoding/json"
)

// The builder reads small fields of payloads that carry a step's input or output or a run's
// spec: a schedule's plugin and activity names, a result's plugin build, a start's
// traceparent. The history's payloads are the store's json.Marshal of history's payload
// structs (fields in declaration order, each once, no spaces), so in that form the names are
// the schedule's first two members and the build and the traceparent their payload's last:
// they are read there without decoding the rest (the names without scanning it: a schedule
// is read up to its input). A payload in any other form is decoded whole. They are not
// validated first (json.Valid of a run's spec text, on each run, cost more than the rest of
// its first span): json.Marshal only writes valid JSON, and in valid JSON a member found at
// the very end, its value plain text, is the object's own. On bytes that are not JSON a
// reader may find a field json.Unmarshal would refuse; it never panics.

// scheduleNames are the plugin and activity of an ActivitySchedule payload, kept in t.
func scheduleNames(data []byte, t *texts) (plugin, activity string) {
	if rest, ok := bytes.CutPrefix(data, []byte(`{"plugin":"`)); ok {
		if p, rest, ok := plainString(rest); ok {
			if rest, ok := bytes.CutPrefix(rest, []byte(`,"activity":"`)); ok {
				if a, rest, ok := plainString(rest); ok && len(rest) > 0 && rest[0] == ',' {
					return t.of(p), t.of(a)
				}
			}
		}
	}
	var sc struct {
		Plugin   string `json:"plugin"`
		Activity string `json:"activity"`
	}
	_ = json.Unmarshal(data, &sc)
	return sc.Plugin, sc.Activity
}

// resultBuild is the plugin_sha256 of an ActivityResult payload, empty when it has none,
// kept in t.
func resultBuild(data []byte, t *texts) string {
	if bytes.HasPrefix(data, []byte(`{"output":`)) {
		const key = `,"plugin_sha256":"`
		body, ok := bytes.CutSuffix(data, []byte(`"}`))
		if ok && len(body) >= len(key)+64 && string(body[len(body)-64-len(key):len(body)-64]) == key && isHex(body[len(body)-64:]) {
			return t.of(body[len(body)-64:])
		}
		if !bytes.Contains(data, []byte("plugin_sha256")) {
			return "" // the output is the only member: no build recorded
		}
	}
	var r struct {
		PluginSHA256 string `json:"plugin_sha256"`
	}
	_ = json.Unmarshal(data, &r)
	return r.PluginSHA256
}

// startedTraceParent is the traceparent of a Started payload, empty when it has none.
func startedTraceParent(data []byte) string {
	if bytes.HasPrefix(data, []byte(`{"workflow_id":`)) {
		const key = `,"traceparent":"`
		if body, ok := bytes.CutSuffix(data, []byte(`"}`)); ok {
			if i := bytes.LastIndex(body, []byte(key)); i >= 0 {
				if v := body[i+len(key):]; isPlain(v) { // the last member: the value runs to the end
					return string(v)
				}
			}
		}
		if !bytes.Contains(data, []byte(`"traceparent"`)) {
			return "" // none recorded
		}
	}
	var tp struct {
		TraceParent string `json:"traceparent"`
	}
	_ = json.Unmarshal(data, &tp)
	return tp.TraceParent
}

// plainString reads a JSON string's text up to its closing quote when it has no escapes and
// only printable ASCII (as plugin and activity names do), returning what follows the quote.
func plainString(b []byte) ([]byte, []byte, bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// isPlain reports whether b is a JSON string's text without escapes, of printable ASCII.
func isPlain(b []byte) bool {
	for _, c := range b {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func isHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
