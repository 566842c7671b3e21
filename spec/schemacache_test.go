package spec

import (
	"crypto/sha256"
	"reflect"
	"testing"
)

// Loading a document a second time gives the same diagnostics whether or not its schema check
// was remembered; a document that fails the schema is never remembered.
func TestSchemaPassCache(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		remember  bool
	}{
		{"valid", "wend: v1\nname: ok\nplugins: {p: ./p}\nsteps:\n  - {id: a, activity: p.x}\n", true},
		{"schema error", "wend: v1\nname: bad\nplugins: {p: ./p}\nsteps:\n  - {id: a, activity: p.x, timeout: 5}\n", false},
		{"semantic error only", "wend: v1\nname: sem\nsteps:\n  - {id: a, activity: nope.x}\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schemaPassed.mu.Lock()
			schemaPassed.m = nil
			schemaPassed.mu.Unlock()
			_, first := Load("a.wend.yaml", []byte(tc.src))
			sum := sha256Of(tc.src)
			if got := schemaPassed.has(sum); got != tc.remember {
				t.Fatalf("remembered = %v, want %v (diagnostics: %v)", got, tc.remember, first)
			}
			_, second := Load("a.wend.yaml", []byte(tc.src))
			if !reflect.DeepEqual(first, second) {
				t.Fatalf("second load differs:\nfirst  %v\nsecond %v", first, second)
			}
		})
	}
}

func TestPassSetBounded(t *testing.T) {
	s := &passSet{max: 3}
	for i := range 10 {
		s.add(sha256Of(string(rune('a' + i))))
	}
	if n := len(s.m); n > 3 {
		t.Fatalf("set holds %d entries, max 3", n)
	}
	if !s.has(sha256Of(string(rune('a' + 9)))) {
		t.Fatal("the newest entry is missing")
	}
}

func sha256Of(s string) [32]byte { return sha256.Sum256([]byte(s)) }
