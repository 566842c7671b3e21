package spec

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.yaml.in/yaml/v3"
)

// inputNode returns the value node of the `input` key of a workflow source.
func inputNode(t testing.TB, src string) *yaml.Node {
	t.Helper()
	root := parseNode(t, src).Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "input" {
			return root.Content[i+1]
		}
	}
	t.Fatal("no input key")
	return nil
}

func diagLines(ds []Diagnostic) string {
	var lines []string
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}

func TestInputSchemaValidate(t *testing.T) {
	src := `input:
  type: object
  required: [user_id]
  additionalProperties: false
  properties:
    user_id: {type: string, minLength: 3}
    count: {type: integer, minimum: 1}
    at: {type: string, format: date-time}
    tags: {type: array, items: {$ref: "#/$defs/tag"}}
  $defs:
    tag: {type: string, enum: [a, b]}
`
	s, ds := compileInputSchema("f", inputNode(t, src))
	if len(ds) != 0 || s == nil {
		t.Fatalf("compile: %s", diagLines(ds))
	}
	cases := []struct {
		name  string
		input string // JSON
		want  string // InputError text, "" for valid
	}{
		{"valid", `{"user_id":"abc","count":2,"at":"2024-01-02T03:04:05Z","tags":["a"]}`, ""},
		{"missing", `{}`, "input.user_id: missing required property"},
		{"wrong type", `{"user_id":5}`, "input.user_id: expected string, got integer"},
		{"too short", `{"user_id":"ab"}`, "input.user_id: length must be >= 3"},
		{"minimum", `{"user_id":"abc","count":0}`, "input.count: must be >= 1"},
		{"not integer", `{"user_id":"abc","count":1.5}`, "input.count: expected integer, got number"},
		{"format asserted", `{"user_id":"abc","at":"yesterday"}`, `input.at: expected a valid date-time, got "yesterday"`},
		{"enum via ref", `{"user_id":"abc","tags":["a","c"]}`, `input.tags[1]: must be one of "a", "b"`},
		{"unknown property", `{"user_id":"abc","extra":1}`, "input.extra: unknown property"},
		{"several", `{"count":"x","extra":1}`, "input.count: expected integer, got string; input.extra: unknown property; input.user_id: missing required property"},
		{"not an object", `[1]`, "input: expected object, got array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(c.input))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			err := ValidateInput(s, v)
			got := ""
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("error %T %v, want *InputError", err, err)
				}
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	if err := ValidateInput(s, map[string]any{"user_id": struct{}{}}); err == nil {
		t.Error("non-JSON input accepted")
	}
	if err := ValidateInput(nil, "anything"); err != nil {
		t.Errorf("nil schema: %v", err)
	}
}

// TestInputSchemaRefusesRemoteRefs is docs/reliability.md H9: no $ref reaches the network or the
// file system, and each refused ref is reported where it is written.
func TestInputSchemaRefusesRemoteRefs(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()

	cases := []struct{ name, src, want string }{
		{"http", "input:\n  properties:\n    a: {$ref: \"" + srv.URL + "/s.json\"}\n",
			`f:3:15: input.properties.a.$ref: $ref "` + srv.URL + `/s.json" is not allowed: schemas are never loaded from the network or files; define it under $defs`},
		{"file", "input:\n  $ref: file:///etc/passwd\n",
			`f:2:9: input.$ref: $ref "file:///etc/passwd" is not allowed: schemas are never loaded from the network or files; define it under $defs`},
		{"relative outside", "input:\n  items: {$ref: ../../../etc/passwd#/x}\n",
			`f:2:17: input.items.$ref: $ref "../../../etc/passwd#/x" is not allowed: schemas are never loaded from the network or files; define it under $defs`},
		{"remote metaschema", "input:\n  $schema: \"" + srv.URL + "/meta\"\n",
			`f:2:12: input.$schema: $schema "` + srv.URL + `/meta" is not allowed: schemas are never loaded from the network or files; define it under $defs`},
	}
	before := schemaLoadAttempts.Load()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ds := compileInputSchema("f", inputNode(t, c.src))
			if s != nil {
				t.Error("schema compiled")
			}
			if got := diagLines(ds); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
	if hits.Load() != 0 {
		t.Errorf("http hits = %d, want 0", hits.Load())
	}
	if n := schemaLoadAttempts.Load() - before; n < int64(len(cases)) {
		t.Errorf("refused loads = %d, want at least %d (the loader must have been asked, and refused)", n, len(cases))
	}
}

func TestInputSchemaCompileErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"metaschema type", "input:\n  type: objekt\n",
			`f:2:9: input.type: must be one of "array", "boolean", "integer", "null", "number", "object", "string"`},
		{"bad regex", "input:\n  properties:\n    a: {pattern: \"(\"}\n",
			`f:3:18: input.properties.a.pattern: expected a valid regex, got "("`},
		{"minimum not a number", "input:\n  minimum: x\n",
			`f:2:12: input.minimum: expected number, got string`},
		{"local ref not found", "input:\n  $ref: \"#/$defs/nope\"\n",
			`f:2:3: input: invalid input schema: input#/$defs/nope not found`},
		{"metaschema ref allowed", "input:\n  $ref: https://json-schema.org/draft/2020-12/schema\n", ``},
		{"draft-07 allowed", "input:\n  $schema: http://json-schema.org/draft-07/schema#\n  type: object\n", ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ds := compileInputSchema("f", inputNode(t, c.src))
			if got := diagLines(ds); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
	if s, ds := compileInputSchema("f", nil); s != nil || ds != nil {
		t.Error("nil input: want nothing")
	}
}
