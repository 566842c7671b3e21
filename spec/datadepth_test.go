package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// nested returns JSON text n arrays deep around 1.
func nestedJSON(n int) string {
	return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
}

func TestCheckJSONDepth(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		deep bool
	}{
		{"scalar", `1`, false},
		{"empty", ``, false},
		{"at the limit", nestedJSON(MaxDataDepth), false},
		{"one over", nestedJSON(MaxDataDepth + 1), true},
		{"objects over", strings.Repeat(`{"a":`, MaxDataDepth+1) + "1" + strings.Repeat("}", MaxDataDepth+1), true},
		{"brackets in strings", `["` + strings.Repeat("[{", 100) + `"]`, false},
		{"escaped quote in string", `["\"` + strings.Repeat("[", 100) + `"]`, false},
		{"wide not deep", "[" + strings.Repeat(nestedJSON(10)+",", 1000) + "1]", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckJSONDepth("input", []byte(c.raw))
			if got := errors.Is(err, ErrDataTooDeep); got != c.deep {
				t.Fatalf("CheckJSONDepth: %v, want deep=%v", err, c.deep)
			}
			if c.deep && !strings.Contains(err.Error(), "the input nests arrays and objects deeper than 64 levels") {
				t.Errorf("message: %v", err)
			}
		})
	}
}

func TestCheckDataDepthNamesThePath(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"a":1,"b":{"c":`+nestedJSON(MaxDataDepth)+`}}`), &v); err != nil {
		t.Fatal(err)
	}
	err := CheckDataDepth("input", v)
	if !errors.Is(err, ErrDataTooDeep) || !strings.Contains(err.Error(), "at input.b.c[0][0]") {
		t.Fatalf("got %v", err)
	}
}

// FuzzDataDepth holds the two depth checks to one answer: the byte scan of JSON text and the
// walk of its decoded value refuse the same texts, and neither panics.
func FuzzDataDepth(f *testing.F) {
	for _, s := range []string{`1`, `{"a":[1,{"b":"]"}]}`, nestedJSON(MaxDataDepth), nestedJSON(MaxDataDepth + 1), `["\\"]`, `"\"[["`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rawErr := CheckJSONDepth("data", raw)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || dec.More() {
			return // not one JSON value: the decoder refuses it, whatever its depth
		}
		if _, err := dec.Token(); err == nil {
			return
		}
		valErr := CheckDataDepth("data", v)
		if errors.Is(rawErr, ErrDataTooDeep) != errors.Is(valErr, ErrDataTooDeep) {
			t.Fatalf("text check %v, value check %v, for %q", rawErr, valErr, raw)
		}
	})
}
