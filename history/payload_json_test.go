package history

import (
	"bytes"
	"encoding/json"
	"testing"
)

// checkSame fails unless enc's output and error match json.Marshal's for v.
func checkSame(t *testing.T, v any, enc func() (json.RawMessage, error)) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, err := enc()
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: error %v, json.Marshal's %v", v, err, wantErr)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("%+v:\ngot          %s\njson.Marshal %s", v, got, want)
	}
}

func TestPayloadJSON(t *testing.T) {
	raws := []json.RawMessage{nil, {}, json.RawMessage(`null`), json.RawMessage(` { "a" : [1, 2.5e3, "b c"] } `),
		json.RawMessage(`{"html":"<b>&amp;</b>"}`), json.RawMessage("\"line\u2028sep\u2029\""), json.RawMessage("\"\xe2\x80\""),
		json.RawMessage(`{"bad":`), json.RawMessage("\"\xff\""), json.RawMessage(`"é"`), json.RawMessage(`1 2`)}
	for _, raw := range raws {
		for _, sha := range []string{"", "ab12", "<odd\"\u2028>"} {
			r := ActivityResult{Output: raw, PluginSHA256: sha}
			checkSame(t, r, r.JSON)
		}
		for _, s := range []ActivitySchedule{
			{Input: raw},
			{Plugin: "p", Activity: "echo", Input: raw, Tries: 3, TimeoutMS: 1500, HeartbeatTimeout: 20},
			{Plugin: "p<\n>", Activity: "\xff", Input: raw, Tries: -1, TimeoutMS: -2, HeartbeatTimeout: -3},
		} {
			checkSame(t, s, s.JSON)
		}
	}
}

func FuzzActivityResultJSON(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "sha")
	f.Add([]byte(" [ 1 , \"<\" ] "), "")
	f.Add([]byte("\"\xe2\x80\xa8\""), "\xff")
	f.Fuzz(func(t *testing.T, out []byte, sha string) {
		r := ActivityResult{Output: out, PluginSHA256: sha}
		checkSame(t, r, r.JSON)
		s := ActivitySchedule{Plugin: sha, Activity: "a", Input: out, Tries: len(out)}
		checkSame(t, s, s.JSON)
	})
}

func BenchmarkActivityResultJSON(b *testing.B) {
	r := ActivityResult{Output: json.RawMessage(`{"i":17,"name":"order-17","tags":["a","b"]}`),
		PluginSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	b.Run("JSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.JSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkActivityScheduleJSON(b *testing.B) {
	s := ActivitySchedule{Plugin: "demo", Activity: "echo", Input: json.RawMessage(`{"i":17}`), Tries: 3, TimeoutMS: 30000}
	b.Run("JSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.JSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
