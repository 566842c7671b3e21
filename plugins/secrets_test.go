package plugins

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

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
	}{
		{name: "env and file", input: `{"h":"Bearer ${{ secrets.tok }}","f":["${{ secrets.f }}"]}`,
			want: `{"h":"Bearer to\"k\\en","f":["from-file"]}`},
		{name: "unreferenced secrets are not read", input: `{"x":1}`, want: `{"x":1}`},
		{name: "unset variable", input: `"${{ secrets.unset }}"`, errHas: "secret unset: environment variable WEND_TEST_UNSET_VARIABLE is not set"},
		{name: "empty variable", input: `"${{ secrets.empty }}"`, errHas: "secret empty: environment variable WEND_TEST_EMPTY is not set"},
		{name: "missing file", input: `"${{ secrets.gone }}"`, errHas: "secret gone: read " + file + ".missing: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := history.ActivityCall{Plugin: "p", Activity: "a", Input: json.RawMessage(tt.input), Secrets: refs}
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
			got := withSecrets(call.Input, vals)
			if string(got) != tt.want || !json.Valid(got) {
				t.Errorf("input %s, want %s", got, tt.want)
			}
		})
	}
}

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
