package history

import (
	"bytes"
	"encoding/json"
	"testing"
)

func checkScheduleJSON(t *testing.T, s ActivitySchedule) {
	t.Helper()
	want, wantErr := json.Marshal(s)
	got, err := s.JSON()
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: error %v, json.Marshal's %v", s, err, wantErr)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("%+v:\nJSON         %s\njson.Marshal %s", s, got, want)
	}
}

func TestActivityScheduleJSON(t *testing.T) {
	for _, s := range []ActivitySchedule{
		{},
		{Plugin: "p", Activity: "echo", Input: json.RawMessage(`{"a":[1,2]}`), Tries: 3, TimeoutMS: 1000, HeartbeatTimeout: 50},
		{Plugin: "p<", Activity: "é\"x", Input: json.RawMessage(` { "a" : "b c" } `), Tries: -1},
		{Input: json.RawMessage(`{"html":"<b>"}`)},
		{Input: json.RawMessage("\"line\u2028sep\"")},
		{Input: json.RawMessage(`{"bad":`)},
		{Input: json.RawMessage("\"\xff\"")},
		{Input: json.RawMessage(`null`), TimeoutMS: -5},
	} {
		checkScheduleJSON(t, s)
	}
}

func FuzzActivityScheduleJSON(f *testing.F) {
	f.Add("p", "echo", []byte(`{"a":1}`), 1, int64(0), int64(7))
	f.Add("<&>", "\u2028\xff", []byte(" [ 1 , \"<\" ] "), -1, int64(-3), int64(0))
	f.Fuzz(func(t *testing.T, plugin, activity string, input []byte, tries int, timeout, hb int64) {
		checkScheduleJSON(t, ActivitySchedule{Plugin: plugin, Activity: activity, Input: input, Tries: tries, TimeoutMS: timeout, HeartbeatTimeout: hb})
	})
}

func checkResultJSON(t *testing.T, r ActivityResult) {
	t.Helper()
	want, wantErr := json.Marshal(r)
	got, err := r.JSON()
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: error %v, json.Marshal's %v", r, err, wantErr)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("%+v:\nJSON         %s\njson.Marshal %s", r, got, want)
	}
}

func TestActivityResultJSON(t *testing.T) {
	for _, r := range []ActivityResult{
		{},
		{Output: json.RawMessage(`{"ok": true, "id": "0123"}`), PluginSHA256: "ab12"},
		{Output: json.RawMessage(`null`)},
		{Output: json.RawMessage(``)},
		{Output: json.RawMessage(`{"html":"<b>"}`), PluginSHA256: "<x>"},
		{Output: json.RawMessage("\"line\u2028sep\"")},
		{Output: json.RawMessage(`{"bad":`)},
		{Output: json.RawMessage("\"\xff\""), PluginSHA256: "é"},
	} {
		checkResultJSON(t, r)
	}
}

func FuzzActivityResultJSON(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "ab")
	f.Add([]byte(" [ 1 , \"<\" ] "), "\u2028\xff")
	f.Fuzz(func(t *testing.T, output []byte, build string) {
		checkResultJSON(t, ActivityResult{Output: output, PluginSHA256: build})
	})
}
