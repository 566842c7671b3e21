package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/secretforms"
)

func TestMasker(t *testing.T) {
	m := &masker{}
	m.add(map[string]string{"a": `s"cr`, "b": "12"})
	tests := []struct{ in, want string }{
		{`{"echo":"x s\"cr y","n":12,"k":{"12":"12"}}`, `{"echo":"x *** y","k":{"***":"***"},"n":12}`},
		{`{"clean":true}`, `{"clean":true}`},
	}
	for _, tt := range tests {
		if got := m.json(json.RawMessage(tt.in)); string(got) != tt.want {
			t.Errorf("json(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	err := m.failure(&history.ActivityError{Type: "T", Message: `said s"cr`, Details: json.RawMessage(`{"body":"s\"cr"}`)})
	var ae *history.ActivityError
	if !errors.As(err, &ae) || ae.Message != "said ***" || string(ae.Details) != `{"body":"***"}` {
		t.Errorf("failure masked to %#v", err)
	}
	if got := m.text("line with 12 and s\"cr"); got != "line with *** and ***" {
		t.Errorf("text: %q", got)
	}
}

// maskedSecret has what breaks naive masking: quotes, a backslash, a newline, URL and
// base64 specials, a non-ASCII letter; long enough for every base64 alignment.
const maskedSecret = "p@ss w\"rd/\\x\n%2F+?&=#:é-0123456789"

// TestMaskEncodings plays a plugin that gives a secret back in each common encoding,
// through each way back to the host: none of them reaches the caller or the log.
func TestMaskEncodings(t *testing.T) {
	t.Setenv("WEND_TEST_MASKED", maskedSecret)
	h, logs := newHost(t, Options{}, testPlugin("tp", ""))
	for _, enc := range secretforms.Encodings {
		for _, ch := range []string{"output", "error", "heartbeat", "stderr"} {
			t.Run(enc+"/"+ch, func(t *testing.T) {
				c := call("tp", "leak", map[string]string{"secret": "${{ secrets.s }}", "encoding": enc, "channel": ch})
				c.Secrets = []history.SecretRef{{Name: "s", Env: "WEND_TEST_MASKED"}}
				c.SecretPlaces = []history.SecretPlace{place("s", 0, "secret")}
				var beats []string
				out, err := h.Execute(context.Background(), c, func(b history.Heartbeat) { beats = append(beats, string(b.Progress)) })
				var got string
				switch ch {
				case "output":
					if err != nil {
						t.Fatal(err)
					}
					got = string(out)
				case "error":
					ae := activityError(t, err)
					if ae.Type != "Leak" {
						t.Fatalf("error %v, want the plugin's Leak", err)
					}
					got = ae.Message + "\n" + string(ae.Details)
				case "heartbeat":
					if err != nil {
						t.Fatal(err)
					}
					got = strings.Join(beats, "\n")
				case "stderr":
					if err != nil {
						t.Fatal(err)
					}
					got = waitLog(t, logs, " after")
				}
				if !strings.Contains(got, "before ") || !strings.Contains(got, secretMask) {
					t.Fatalf("%s came back as %q: want it, masked", ch, got)
				}
				for _, form := range leakedForms(t, enc) {
					if strings.Contains(got, form) {
						t.Errorf("%s holds the secret as %q: %q", ch, form, got)
					}
				}
			})
		}
	}
}

// leakedForms are the texts the leak activity writes for enc, as they would appear in
// text and inside JSON: what must not come back.
func leakedForms(t *testing.T, enc string) []string {
	t.Helper()
	s, err := secretforms.Encode(maskedSecret, enc)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(s)
	forms := []string{s, string(j[1 : len(j)-1])}
	for _, l := range strings.Split(s, "\n") { // a stderr line holds a piece of a multi-line form
		if len(l) >= 3 {
			forms = append(forms, l)
		}
	}
	return forms
}

// waitLog returns the log lines once one holds want, and forgets them.
func waitLog(t *testing.T, logs *logLines, want string) string {
	t.Helper()
	deadline := time.Now().Add(slack(5 * time.Second))
	for {
		if all := logs.String(); strings.Contains(all, want) {
			logs.mu.Lock()
			logs.lines = nil // the next subtest waits for its own lines
			logs.mu.Unlock()
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in %s", want, logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkMaskCleanOutput is what every call of a host that knows one secret pays: looking
// for each encoding of it in a 64 KiB output that holds none.
func BenchmarkMaskCleanOutput(b *testing.B) {
	m := &masker{}
	m.add(map[string]string{"s": maskedSecret})
	out, _ := json.Marshal(map[string]string{"body": strings.Repeat("lorem ipsum dolor sit amet ", 64<<10/27)})
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		m.json(out)
	}
}

// BenchmarkMaskStderrLine is the cost of one stderr line of a plugin once a secret is known.
func BenchmarkMaskStderrLine(b *testing.B) {
	m := &masker{}
	m.add(map[string]string{"s": maskedSecret})
	line := "2026-01-01T00:00:00Z info fetched order 42 in 18ms from https://api.example.com/orders"
	for b.Loop() {
		m.text(line)
	}
}

func TestFinder(t *testing.T) {
	f := newFinder([][]byte{[]byte("abc"), []byte("xy"), []byte("abd"), nil})
	one := newFinder([][]byte{[]byte("q")})
	tests := []struct {
		f    *finder
		in   string
		want bool
	}{
		{f, "", false}, {f, "a", false}, {f, "ab", false}, {f, "abc", true}, {f, "zzabd", true},
		{f, "xy", true}, {f, "zzzx", false}, {f, "zzzxy", true}, {f, "abxabcx", true}, {f, "ab ab ac", false},
		{one, "", false}, {one, "q", true}, {one, "abq", true}, {one, "abc", false},
	}
	for _, tt := range tests {
		if got := tt.f.in([]byte(tt.in)); got != tt.want {
			t.Errorf("in(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
