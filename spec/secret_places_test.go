package spec

import (
	"reflect"
	"strings"
	"testing"
)

// loadSecretValue compiles `with: text` of an activity in a workflow declaring secrets pw
// and tok.
func loadSecretValue(t testing.TB, text string) *Value {
	t.Helper()
	src := "wend: v1\nname: v\nsecrets: {pw: {env: PW}, tok: {env: TOK}}\nplugins: {demo: ./demo}\nsteps:\n" +
		"  - activity: demo.echo\n    with: " + text + "\n"
	w, ds := Load("v.wend.yaml", []byte(src))
	if len(ds) > 0 {
		t.Fatalf("load: %s", ds.Error())
	}
	return w.Steps[0].With
}

// TestSecretPlaces: the places of a `with` are its templates' own secret parts, wherever
// the evaluated text around them came from; reference-like text in data makes none.
func TestSecretPlaces(t *testing.T) {
	ref := SecretRef
	env := map[string]any{"input": map[string]any{
		"note":  ref("pw"),
		"pre":   "a" + ref("tok") + "b",
		"multi": "é" + ref("pw") + ref("pw"),
	}}
	tests := []struct {
		name, yaml string
		want       []SecretFill
	}{
		{"no secret", `{url: "${{ input.note }}"}`, nil},
		{"whole string", `{h: "${{ secrets.pw }}"}`, []SecretFill{{Path: []string{"h"}, Name: "pw", Offset: 0}}},
		{"inside text", `{headers: {Authorization: "Bearer ${{ secrets.tok }}"}}`,
			[]SecretFill{{Path: []string{"headers", "Authorization"}, Name: "tok", Offset: 7}}},
		{"in a list", `{argv: [echo, "x=${{ secrets.pw }}"]}`, []SecretFill{{Path: []string{"argv", "1"}, Name: "pw", Offset: 2}}},
		{"after data that looks like a reference", `{u: "${{ input.pre }}:${{ secrets.pw }}"}`,
			[]SecretFill{{Path: []string{"u"}, Name: "pw", Offset: len("a" + ref("tok") + "b:")}}},
		{"before data that looks like a reference", `{u: "${{ secrets.pw }}${{ input.note }}"}`,
			[]SecretFill{{Path: []string{"u"}, Name: "pw", Offset: 0}}},
		{"two in one string, offsets in bytes", `{u: "${{ input.multi }}${{ secrets.tok }}-${{ secrets.pw }}"}`,
			[]SecretFill{{Path: []string{"u"}, Name: "tok", Offset: len(env["input"].(map[string]any)["multi"].(string))},
				{Path: []string{"u"}, Name: "pw", Offset: len(env["input"].(map[string]any)["multi"].(string)) + len(ref("tok")) + 1}}},
		{"a key with a dot", `{"a.b": {c: ["${{ secrets.pw }}"]}}`, []SecretFill{{Path: []string{"a.b", "c", "0"}, Name: "pw", Offset: 0}}},
		{"the whole with", `"${{ secrets.pw }}"`, []SecretFill{{Path: nil, Name: "pw", Offset: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadSecretValue(t, tt.yaml)
			got, fills, err := v.EvalFills(env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fills, tt.want) && !(len(fills) == 0 && len(tt.want) == 0) {
				t.Fatalf("fills %+v, want %+v", fills, tt.want)
			}
			plain, err := v.Eval(env)
			if err != nil || !reflect.DeepEqual(plain, got) {
				t.Errorf("EvalFills value %#v differs from Eval's %#v (%v)", got, plain, err)
			}
			for _, f := range fills {
				s := at(t, got, f.Path)
				if !strings.HasPrefix(s[f.Offset:], ref(f.Name)) {
					t.Errorf("no reference to %s at byte %d of %q", f.Name, f.Offset, s)
				}
			}
		})
	}
}

// FuzzSecretPlaces: whatever the data around it holds (references, template syntax, any
// bytes), a `with` has exactly its templates' places, each on its own reference.
func FuzzSecretPlaces(f *testing.F) {
	for _, s := range []string{"", SecretRef("pw"), "${{ secrets.tok }}${{ secrets.pw }}", "${{", "}}", "é\x00\xff", `"\`} {
		f.Add(s, s)
	}
	v := loadSecretValue(f, `{a: "${{ input.x }}", b: ["${{ input.x }}${{ secrets.pw }}${{ input.y }}-${{ secrets.tok }}"], c: "${{ input.y }}"}`)
	f.Fuzz(func(t *testing.T, x, y string) {
		env := map[string]any{"input": map[string]any{"x": x, "y": y}}
		got, fills, err := v.EvalFills(env)
		if err != nil {
			t.Fatal(err)
		}
		want := []SecretFill{{Path: []string{"b", "0"}, Name: "pw", Offset: len(x)},
			{Path: []string{"b", "0"}, Name: "tok", Offset: len(x) + len(SecretRef("pw")) + len(y) + 1}}
		if !reflect.DeepEqual(fills, want) {
			t.Fatalf("fills %+v, want %+v", fills, want)
		}
		for _, f := range fills {
			if s := at(t, got, f.Path); !strings.HasPrefix(s[f.Offset:], SecretRef(f.Name)) {
				t.Fatalf("no reference to %s at byte %d of %q", f.Name, f.Offset, s)
			}
		}
	})
}

// at is the string at path in x.
func at(t *testing.T, x any, path []string) string {
	t.Helper()
	for _, k := range path {
		switch c := x.(type) {
		case map[string]any:
			x = c[k]
		case []any:
			i := 0
			for _, ch := range k {
				i = i*10 + int(ch-'0')
			}
			x = c[i]
		default:
			t.Fatalf("path %v goes through %T", path, x)
		}
	}
	s, ok := x.(string)
	if !ok {
		t.Fatalf("path %v holds %T, not a string", path, x)
	}
	return s
}
