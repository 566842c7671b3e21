package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func examplesFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "examples", name))
}

func TestValueEval(t *testing.T) {
	env := map[string]any{
		"input": map[string]any{"n": 3, "name": "ada", "tags": []any{"a", "b"}},
		"state": map[string]any{},
		"steps": map[string]any{},
		"run":   map[string]any{"workflow_id": "w1", "run_id": "r1"},
	}
	tests := []struct {
		name string
		yaml string
		want any
	}{
		{"exact template keeps the type", `v: "${{ input.n * 2 }}"`, 6},
		{"interpolation makes text", `v: "n=${{ input.n }} for ${{ input.name }}"`, "n=3 for ada"},
		{"interpolated list is JSON", `v: "tags ${{ input.tags }}"`, `tags ["a","b"]`},
		{"nil interpolates empty", `v: "[${{ input.missing }}]"`, "[]"},
		{"literal scalars", `v: [1, 2.5, true, null, text]`, []any{1, 2.5, true, nil, "text"}},
		{"nested", `v: {a: {b: ["${{ run.workflow_id }}"]}}`, map[string]any{"a": map[string]any{"b": []any{"w1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "wend: v1\nname: t\noutput:\n  " + tt.yaml + "\nsteps: [{delay: 1s}]\n"
			w, ds := Load("t.wend.yaml", []byte(src))
			if len(ds) > 0 {
				t.Fatal(ds.Error())
			}
			got, err := w.Output.Eval(env)
			if err != nil {
				t.Fatal(err)
			}
			if v := got.(map[string]any)["v"]; !reflect.DeepEqual(v, tt.want) {
				t.Errorf("got %#v, want %#v", v, tt.want)
			}
		})
	}
}

// TestLiteralJSON: a value without templates gives, once, the JSON its evaluation encodes to;
// one with a template or a secret reference gives none, and is evaluated as before.
func TestLiteralJSON(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // "" for none
	}{
		{"mapping of scalars", `{i: 3, s: text, f: 2.5, b: true, n: null}`, `{"b":true,"f":2.5,"i":3,"n":null,"s":"text"}`},
		{"nested list", `[1, {a: [x]}]`, `[1,{"a":["x"]}]`},
		{"scalar", `7`, `7`},
		{"exact template", `"${{ input.n }}"`, ""},
		{"template inside", `{a: [1, "n=${{ input.n }}"]}`, ""},
		{"secret reference", `{token: "${{ secrets.TOKEN }}"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "wend: v1\nname: t\nplugins: {p: ./p}\nsecrets: {TOKEN: {env: TOKEN}}\nsteps:\n  - activity: p.a\n    with: " + tt.yaml + "\n"
			w, ds := Load("t.wend.yaml", []byte(src))
			if len(ds) > 0 {
				t.Fatal(ds.Error())
			}
			with := w.Steps[0].With
			got, ok := with.LiteralJSON()
			if ok != (tt.want != "") || string(got) != tt.want {
				t.Fatalf("LiteralJSON = %s, %v; want %q", got, ok, tt.want)
			}
			if !ok {
				return
			}
			v, err := with.Eval(nil)
			if err != nil {
				t.Fatal(err)
			}
			if enc, _ := json.Marshal(v); string(enc) != string(got) {
				t.Fatalf("LiteralJSON %s, json.Marshal(Eval) %s", got, enc)
			}
			if again, _ := with.LiteralJSON(); &again[0] != &got[0] {
				t.Fatal("encoded again: want the bytes of the first call")
			}
		})
	}
}
