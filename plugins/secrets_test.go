package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wendflow/wend/history"
)

func place(name string, offset int, path ...string) history.SecretPlace {
	return history.SecretPlace{Path: path, Name: name, Offset: offset}
}

func TestResolveSecrets(t *testing.T) {
	t.Setenv("WEND_TEST_TOKEN", `to"k\en`)
	t.Setenv("WEND_TEST_EMPTY", "")
	file := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refs := []history.SecretRef{{Name: "tok", Env: "WEND_TEST_TOKEN"}, {Name: "f", File: file},
		{Name: "unset", Env: "WEND_TEST_UNSET_VARIABLE"}, {Name: "empty", Env: "WEND_TEST_EMPTY"},
		{Name: "gone", File: file + ".missing"}}
	tests := []struct {
		name, input, want, errHas string
		places                    []history.SecretPlace
	}{
		{name: "env and file", input: `{"h":"Bearer ${{ secrets.tok }}","f":["${{ secrets.f }}"]}`,
			places: []history.SecretPlace{place("tok", 7, "h"), place("f", 0, "f", "0")},
			want:   `{"f":["from-file"],"h":"Bearer to\"k\\en"}`},
		{name: "unreferenced secrets are not read", input: `{"x":1}`, want: `{"x":1}`},
		{name: "a reference without a place is text", input: `{"note":"${{ secrets.tok }}","h":"${{ secrets.unset }}"}`,
			want: `{"note":"${{ secrets.tok }}","h":"${{ secrets.unset }}"}`},
		{name: "unset variable", input: `"${{ secrets.unset }}"`, places: []history.SecretPlace{place("unset", 0)},
			errHas: "secret unset: environment variable WEND_TEST_UNSET_VARIABLE is not set"},
		{name: "empty variable", input: `"${{ secrets.empty }}"`, places: []history.SecretPlace{place("empty", 0)},
			errHas: "secret empty: environment variable WEND_TEST_EMPTY is not set"},
		{name: "missing file", input: `"${{ secrets.gone }}"`, places: []history.SecretPlace{place("gone", 0)},
			errHas: "secret gone: read " + file + ".missing: no such file or directory"},
		{name: "undeclared", input: `"${{ secrets.other }}"`, places: []history.SecretPlace{place("other", 0)},
			errHas: "secret other: not declared under the workflow's secrets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := history.ActivityCall{Plugin: "p", Activity: "a", Input: json.RawMessage(tt.input), Secrets: refs, SecretPlaces: tt.places}
			vals, err := resolveSecrets(call)
			if tt.errHas != "" {
				var ae *history.ActivityError
				if !errors.As(err, &ae) || ae.Type != TypeSecretMissing || !ae.NonRetryable || !strings.Contains(ae.Message, tt.errHas) {
					t.Fatalf("got %v, want a non-retryable SecretMissing containing %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := fillSecrets(call, vals)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || !json.Valid(got) {
				t.Errorf("input %s, want %s", got, tt.want)
			}
		})
	}
}

// TestFillSecrets: a value goes at its places and nowhere else; a place that holds no
// reference refuses the call.
func TestFillSecrets(t *testing.T) {
	vals := map[string]string{"pw": `V"1`, "tok": "T2"}
	tests := []struct {
		name, input, want string
		places            []history.SecretPlace
	}{
		{"data reference beside the place", `{"note":"${{ secrets.pw }}","h":"Bearer ${{ secrets.pw }}"}`,
			`{"h":"Bearer V\"1","note":"${{ secrets.pw }}"}`, []history.SecretPlace{place("pw", 7, "h")}},
		{"data reference in the same string", `{"u":"${{ secrets.tok }}:${{ secrets.pw }}"}`,
			`{"u":"${{ secrets.tok }}:V\"1"}`, []history.SecretPlace{place("pw", 19, "u")}},
		{"two places in one string", `{"u":"${{ secrets.tok }}-${{ secrets.pw }}"}`,
			`{"u":"T2-V\"1"}`, []history.SecretPlace{place("tok", 0, "u"), place("pw", 19, "u")}},
		{"list item, nested", `{"a":[1,{"b":["x","${{ secrets.tok }}"]}],"n":1.50}`,
			`{"a":[1,{"b":["x","T2"]}],"n":1.50}`, []history.SecretPlace{place("tok", 0, "a", "1", "b", "1")}},
		{"whole input", `"${{ secrets.tok }}"`, `"T2"`, []history.SecretPlace{place("tok", 0)}},
		{"key that looks like an index", `{"0":"${{ secrets.tok }}"}`, `{"0":"T2"}`, []history.SecretPlace{place("tok", 0, "0")}},
		{"offset off the reference", `{"h":"x${{ secrets.pw }}"}`, "", []history.SecretPlace{place("pw", 0, "h")}},
		{"other secret's reference", `{"h":"${{ secrets.tok }}"}`, "", []history.SecretPlace{place("pw", 0, "h")}},
		{"missing key", `{"h":"${{ secrets.pw }}"}`, "", []history.SecretPlace{place("pw", 0, "g")}},
		{"not a string", `{"h":["${{ secrets.pw }}"]}`, "", []history.SecretPlace{place("pw", 0, "h")}},
		{"index out of range", `["${{ secrets.pw }}"]`, "", []history.SecretPlace{place("pw", 0, "1")}},
		{"index not canonical", `["${{ secrets.pw }}"]`, "", []history.SecretPlace{place("pw", 0, "00")}},
		{"offset past the end", `"${{ secrets.pw }}"`, "", []history.SecretPlace{place("pw", 99)}},
		{"negative offset", `"${{ secrets.pw }}"`, "", []history.SecretPlace{place("pw", -1)}},
		{"same place twice", `"${{ secrets.pw }}"`, "", []history.SecretPlace{place("pw", 0), place("pw", 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := history.ActivityCall{Plugin: "p", Activity: "a", Input: json.RawMessage(tt.input), SecretPlaces: tt.places}
			got, err := fillSecrets(call, vals)
			if tt.want == "" {
				var ae *history.ActivityError
				if !errors.As(err, &ae) || ae.Type != TypeSecretPlace || !ae.NonRetryable || strings.Contains(ae.Message, `V"1`) {
					t.Fatalf("got %s, %v; want a non-retryable SecretPlace naming no value", got, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// FuzzFillSecrets: whatever a call's data holds around a place, the value lands at the
// place only; every other string reaches the plugin byte for byte.
func FuzzFillSecrets(f *testing.F) {
	for _, s := range []string{"", "${{ secrets.pw }}", "${{ secrets.pw}}", "${{secrets.pw }}", "é\x00", `"\u0024{{`} {
		f.Add(s, s, 0)
	}
	const value = "VALUE-4f1e"
	f.Fuzz(func(t *testing.T, data, around string, offset int) {
		if strings.Contains(data+around, value) || !utf8.ValidString(data+around) { // a call's input is JSON: valid UTF-8
			t.Skip()
		}
		with := around + "${{ secrets.pw }}" + around
		input := json.RawMessage(`{"data":` + string(mustJSON(data)) + `,"list":[` + string(mustJSON(data)) + `],"with":` + string(mustJSON(with)) + `}`)
		call := history.ActivityCall{Plugin: "p", Activity: "a", Input: input,
			SecretPlaces: []history.SecretPlace{place("pw", offset, "with")}}
		got, err := fillSecrets(call, map[string]string{"pw": value})
		if err != nil {
			if offset == len(around) {
				t.Fatalf("the place itself was refused: %v", err)
			}
			return
		}
		var doc struct {
			Data string   `json:"data"`
			List []string `json:"list"`
			With string   `json:"with"`
		}
		if err := json.Unmarshal(got, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Data != data || len(doc.List) != 1 || doc.List[0] != data {
			t.Fatalf("data changed: %q, %q; want %q", doc.Data, doc.List, data)
		}
		if n := strings.Count(string(got), value); n != 1 {
			t.Fatalf("value filled %d times: %s", n, got)
		}
		if !strings.HasPrefix(with[offset:], "${{ secrets.pw }}") || doc.With != with[:offset]+value+with[offset+len("${{ secrets.pw }}"):] {
			t.Fatalf("filled %q at byte %d of %q", doc.With, offset, with)
		}
	})
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// TestInputTextIsNoSecret plays whoever starts a run: input text that spells a secret's
// reference reaches the plugin as that text, while the place the workflow put a reference
// gets the value (which comes back masked).
func TestInputTextIsNoSecret(t *testing.T) {
	t.Setenv("WEND_TEST_PW", "hunter2-value")
	h, _ := newHost(t, Options{}, testPlugin("tp", ""))
	c := call("tp", "echo", map[string]any{"note": "${{ secrets.pw }}", "h": "Bearer ${{ secrets.pw }}",
		"deep": []any{map[string]any{"x": "a ${{ secrets.pw }} b"}}})
	c.Secrets = []history.SecretRef{{Name: "pw", Env: "WEND_TEST_PW"}}
	c.SecretPlaces = []history.SecretPlace{place("pw", 7, "h")}
	out, err := h.Execute(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"deep":[{"x":"a ${{ secrets.pw }} b"}],"h":"Bearer ***","note":"${{ secrets.pw }}"}`
	if string(out) != want {
		t.Fatalf("the plugin echoed %s, want %s", out, want)
	}
	// Without places, no value at all: a call from an engine that compiled none.
	c.SecretPlaces = nil
	if out, err = h.Execute(context.Background(), c, nil); err != nil || strings.Contains(string(out), "***") {
		t.Fatalf("without places the plugin echoed %s, %v", out, err)
	}
}

// BenchmarkFillSecrets is the host's cost of putting one value at its place in a small input.
func BenchmarkFillSecrets(b *testing.B) {
	call := history.ActivityCall{Input: json.RawMessage(`{"url":"https://api.example.com/orders/42","headers":{"Authorization":"Bearer ${{ secrets.tok }}"},"timeout":"5s"}`),
		SecretPlaces: []history.SecretPlace{place("tok", 7, "headers", "Authorization")}}
	vals := map[string]string{"tok": "tok-0123456789abcdef"}
	for b.Loop() {
		if _, err := fillSecrets(call, vals); err != nil {
			b.Fatal(err)
		}
	}
}
