package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConcurrencyDecoded(t *testing.T) {
	src := "wend: v1\nname: pay\nconcurrency: {key: \"${{ input.customer_id }}\", limit: 2}\nsteps: [{delay: 1s}]\n"
	w, ds := Load("pay.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	if c := w.Concurrency; c == nil || c.Limit != 2 || c.Pos.Line != 3 || c.Key == nil {
		t.Fatalf("concurrency %+v", c)
	}
	w, ds = Load("pay.wend.yaml", []byte("wend: v1\nname: pay\nconcurrency: {key: all}\nsteps: [{delay: 1s}]\n"))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	if w.Concurrency.Limit != 1 {
		t.Errorf("default limit %d, want 1", w.Concurrency.Limit)
	}
}

func TestConcurrencyKeyOf(t *testing.T) {
	long := strings.Repeat("k", MaxConcurrencyKeyBytes+1)
	for _, tc := range []struct {
		name, key string
		input     any
		want, err string
	}{
		{"string", "${{ input.c }}", map[string]any{"c": "ann"}, "ann", ""},
		{"number", "${{ input.c }}", map[string]any{"c": float64(42)}, "42", ""},
		{"fraction", "${{ input.c }}", map[string]any{"c": 1.5}, "1.5", ""},
		{"bool", "${{ input.c }}", map[string]any{"c": true}, "true", ""},
		{"interpolated", "eu-${{ input.c }}", map[string]any{"c": "ann"}, "eu-ann", ""},
		{"run id", "${{ run.workflow_id }}", map[string]any{}, "wf-1", ""},
		{"literal", "everyone", map[string]any{}, "everyone", ""},
		{"default", "${{ input.c ?? \"none\" }}", map[string]any{}, "none", ""},
		{"missing", "${{ input.c }}", map[string]any{}, "",
			"pay.wend.yaml:3: concurrency.key: evaluates to null; a key must be a string, number or boolean (give every run one: end the expression with ?? \"none\")"},
		{"object", "${{ input.c }}", map[string]any{"c": map[string]any{"a": 1.0}}, "", "evaluates to an object"},
		{"list", "${{ input.c }}", map[string]any{"c": []any{"a"}}, "", "evaluates to a list"},
		{"too long", "${{ input.c }}", map[string]any{"c": long}, "", "evaluates to 257 bytes, over the 256-byte limit of a key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "wend: v1\nname: pay\nconcurrency: {key: \"" + strings.ReplaceAll(tc.key, `"`, `\"`) + "\"}\nsteps: [{delay: 1s}]\n"
			w, ds := Load("pay.wend.yaml", []byte(src))
			if ds.HasErrors() {
				t.Fatal(ds.Error())
			}
			got, err := w.Concurrency.KeyOf("pay.wend.yaml", "wf-1", "r-1", tc.input)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want it to hold %q", err, tc.err)
				}
				if !strings.HasPrefix(err.Error(), "pay.wend.yaml:3: ") {
					t.Errorf("err %q does not name the key's line", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q %v, want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzConcurrencyKey: whatever a run's input holds, its key is text within the bound or an
// error naming the key's line; never a panic.
func FuzzConcurrencyKey(f *testing.F) {
	for _, s := range []string{`{"c": "ann"}`, `{"c": 1e308}`, `{"c": null}`, `{"c": {"a": [1]}}`, `[]`, `"x"`, `{"c": true}`} {
		f.Add(s)
	}
	src := "wend: v1\nname: pay\nconcurrency: {key: \"${{ input.c }}\"}\nsteps: [{delay: 1s}]\n"
	w, ds := Load("pay.wend.yaml", []byte(src))
	if ds.HasErrors() {
		f.Fatal(ds.Error())
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var input any
		if json.Unmarshal([]byte(raw), &input) != nil {
			return
		}
		key, err := w.Concurrency.KeyOf("pay.wend.yaml", "wf", "run", input)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "pay.wend.yaml:3: concurrency.key: ") {
				t.Fatalf("error %q does not name the key's line", err)
			}
			return
		}
		if len(key) > MaxConcurrencyKeyBytes {
			t.Fatalf("key of %d bytes", len(key))
		}
	})
}
