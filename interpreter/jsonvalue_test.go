package interpreter

import (
	"strings"

	"encoding/json"
	"github.com/wendflow/wend/history"
	"reflect"
	"testing"
)

// fastValueSeeds are payloads of each shape fastValue takes and of each it leaves to
// encoding/json (escapes, bad UTF-8, numbers out of range, deep nesting, bad syntax).
var fastValueSeeds = []string{
	`null`, `true`, `false`, `0`, `-0`, `12`, `-1.5e3`, `1E+2`, `0.000001`, `12345678901234567890`,
	`1e400`, `-`, `01`, `1.`, `.5`, `1e`, `+1`, `NaN`,
	`""`, `"abc"`, `"é☃"`, `"\u00e9"`, `"a\"b"`, "\"\xff\"", "\"a\tb\"", `"\ud800"`,
	`[]`, `{}`, `[1,"x",[true,null],{"a":{}}]`, ` { "a" : [ 1 , 2 ] , "b" : null } `,
	`{"a":1,"a":2}`, `{"a":1,}`, `[1,]`, `{"a"}`, `{1:2}`, `[1 2]`, `{"a":1} x`, `[`, `{"a":`, ``, ` `,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	`{"output":{"status":"ok","items":[{"sku":"x1","qty":2}],"total":42.5},"plugin_sha256":"ab"}`,
	`truex`, `nul`, `t`,
}

// FuzzFastValue: whenever fastValue decodes a payload, encoding/json decodes it to the same
// value; and fastValue takes every payload encoding/json itself writes of plain values.
func FuzzFastValue(f *testing.F) {
	for _, s := range fastValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := fastValue(b)
		var want any
		err := json.Unmarshal(b, &want)
		if !ok {
			return // encoding/json decides
		}
		if err != nil {
			t.Fatalf("fastValue took %q, which encoding/json refuses: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fastValue %#v, encoding/json %#v", b, got, want)
		}
	})
}

// TestFastValueTakesWhatTheEngineWrites: the payloads a run records (encoding/json's output
// of decoded values, without escapes) take the fast path, so the fallback is the exception.
func TestFastValueTakesWhatTheEngineWrites(t *testing.T) {
	for _, s := range []string{`null`, `{"a":[1,2.5,-3e-7,"x",true,false,null,{}],"é":"☃"}`, `[]`, `"plain"`} {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fastValue(b); !ok {
			t.Errorf("fastValue left %s to encoding/json", b)
		}
	}
}

// TestFastValueLargePayload: past maxSharedText each string is copied on its own; the value
// is encoding/json's all the same.
func TestFastValueLargePayload(t *testing.T) {
	var items []any
	for i := range 400 {
		items = append(items, map[string]any{"sku": "x" + strings.Repeat("é", i%7), "qty": float64(i) * 1.5, "ok": i%2 == 0})
	}
	b, err := json.Marshal(map[string]any{"items": items, "note": "n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) <= maxSharedText {
		t.Fatalf("payload of %d bytes is not past %d", len(b), maxSharedText)
	}
	got, ok := fastValue(b)
	var want any
	if err := json.Unmarshal(b, &want); err != nil || !ok {
		t.Fatalf("ok %v, %v", ok, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("large payload decoded differently")
	}
}

// BenchmarkResultOutput prices decoding a step's outcome: fastValue against encoding/json.
func BenchmarkResultOutput(b *testing.B) {
	ev := history.Event{Type: history.ActivityCompleted, Data: json.RawMessage(
		`{"output":{"status":"ok","id":"A-1042","items":[{"sku":"x1","qty":2},{"sku":"y7","qty":1}],"total":42.5},"plugin_sha256":"` +
			strings.Repeat("ab", 32) + `"}`)}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := resultOutput(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var res struct {
				Output any `json:"output"`
			}
			if err := json.Unmarshal(ev.Data, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
