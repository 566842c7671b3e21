package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestYAMLJSONValues(t *testing.T) {
	src := `s: text
q: "42"
i: 42
h: 0x1F
u: 1_000
big: 18446744073709551615
f: 1.5
e: 1e3
b: true
y: yes
n: ~
empty:
ts: 2001-12-14
bin: !!binary aGk=
tagged: !!str 7
list: [1, a]
nested: {k: [ {x: 1} ]}
`
	jd, err := yamlToJSON(parseNode(t, src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"s": "text", "q": "42", "i": int64(42), "h": int64(31), "u": int64(1000),
		"big": json.Number("18446744073709551615"), "f": 1.5, "e": 1000.0, "b": true,
		"y": "yes", "n": nil, "empty": nil, "ts": "2001-12-14", "bin": "aGk=", "tagged": "7",
		"list":   []any{int64(1), "a"},
		"nested": map[string]any{"k": []any{map[string]any{"x": int64(1)}}},
	}
	if !reflect.DeepEqual(jd.value, want) {
		t.Errorf("got  %#v\nwant %#v", jd.value, want)
	}
}

func TestYAMLJSONIndex(t *testing.T) {
	src := "a:\n  b: [x, {c/d~e: 1}]\n"
	jd, err := yamlToJSON(parseNode(t, src))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ptr       string
		line, col int
		keyLine   int
		keyCol    int
	}{
		{"", 1, 1, 0, 0},
		{"/a", 2, 3, 1, 1},
		{"/a/b", 2, 6, 2, 3},
		{"/a/b/0", 2, 7, 0, 0},
		{"/a/b/1/c~1d~0e", 2, 18, 2, 11},
	}
	for _, c := range cases {
		n := jd.nodes[c.ptr]
		if n == nil || n.Line != c.line || n.Column != c.col {
			t.Errorf("nodes[%q] = %v, want %d:%d", c.ptr, n, c.line, c.col)
		}
		k := jd.keys[c.ptr]
		switch {
		case c.keyLine == 0 && k != nil:
			t.Errorf("keys[%q] = %v, want none", c.ptr, k)
		case c.keyLine != 0 && (k == nil || k.Line != c.keyLine || k.Column != c.keyCol):
			t.Errorf("keys[%q] = %v, want %d:%d", c.ptr, k, c.keyLine, c.keyCol)
		}
	}
	if got := wendPath("", jd.value, "/a/b/1/c~1d~0e"); got != `a.b[1]["c/d~e"]` {
		t.Errorf("wendPath = %s", got)
	}
}

func TestYAMLJSONErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"alias", "a: &x 1\nb: *x\n", "2:4: aliases (*x) are not supported"},
		{"non-scalar key", "? [a]\n: 1\n", "1:3: mapping keys must be scalars, got a list"},
		{"mapping key", "? {a: 1}\n: 1\n", "1:3: mapping keys must be scalars, got a mapping"},
		{"merge key", "a: {x: 1}\nb:\n  <<: {y: 1}\n", "3:3: merge keys (<<) are not supported"},
		{"infinity", "a: .inf\n", "1:4: .inf is not a JSON number"},
		{"nan", "a: [.nan]\n", "1:5: .nan is not a JSON number"},
		{"unknown tag", "a: !custom 1\n", "1:4: unsupported YAML tag !custom"},
		{"huge int", "a: !!int 123456789012345678901234567890\n", `1:4: integer "123456789012345678901234567890" out of range`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(c.src), &n); err != nil {
				t.Fatalf("yaml rejects the case before the converter sees it, so it tests nothing: %v", err)
			}
			_, err := yamlToJSON(&n)
			if err == nil || err.Error() != c.want {
				t.Errorf("err = %v, want %s", err, c.want)
			}
		})
	}
}

// TestYAMLJSONDuplicateKey builds the node by hand: the yaml parser keeps duplicates in the
// node tree and only the decoder rejects them.
func TestYAMLJSONDuplicateKey(t *testing.T) {
	n := &yaml.Node{Kind: yaml.MappingNode, Line: 1, Column: 1, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "a", Line: 1, Column: 1}, {Kind: yaml.ScalarNode, Value: "1", Line: 1, Column: 4},
		{Kind: yaml.ScalarNode, Value: "a", Line: 2, Column: 1}, {Kind: yaml.ScalarNode, Value: "2", Line: 2, Column: 4},
	}}
	if _, err := yamlToJSON(n); err == nil || err.Error() != `2:1: duplicate key "a"` {
		t.Errorf("err = %v", err)
	}
}

// TestYAMLJSONBounded: hand-built trees the parser would never produce must not recurse without
// bound or crash: a self-referencing alias, a cycle through Content, very deep nesting, odd
// mappings and nil children.
func TestYAMLJSONBounded(t *testing.T) {
	alias := &yaml.Node{Kind: yaml.AliasNode, Value: "x"}
	alias.Alias = alias

	cyc := &yaml.Node{Kind: yaml.SequenceNode}
	cyc.Content = []*yaml.Node{cyc}

	deep := &yaml.Node{Kind: yaml.ScalarNode, Value: "x"}
	for i := 0; i < 10000; i++ {
		deep = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{deep}}
	}
	odd := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "a"}}}
	nilChild := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{nil}}
	nilKey := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{nil, nil}}
	badKind := &yaml.Node{Kind: 99}

	for name, n := range map[string]*yaml.Node{"alias": alias, "cycle": cyc, "deep": deep, "odd": odd, "nil child": nilChild, "nil key": nilKey, "bad kind": badKind} {
		if _, err := yamlToJSON(n); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// The empty document is null, not an error.
	jd, err := yamlToJSON(&yaml.Node{Kind: yaml.DocumentNode})
	if err != nil || jd.value != nil {
		t.Errorf("empty document: %v, %v", jd, err)
	}
}

func TestYAMLJSONPointerEscaping(t *testing.T) {
	for _, s := range []string{"", "a", "a/b", "~", "~1", "a~/b", "/~0/"} {
		esc := escapePointer(s)
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(esc, "~0", ""), "~1", ""), "/") {
			t.Errorf("escapePointer(%q) = %q still holds '/'", s, esc)
		}
		if got := unescapePointer(esc); got != s {
			t.Errorf("round trip %q -> %q -> %q", s, esc, got)
		}
	}
	if got := splitPointer("/a~1b/0/~0"); !reflect.DeepEqual(got, []string{"a/b", "0", "~"}) {
		t.Errorf("splitPointer = %q", got)
	}
}
