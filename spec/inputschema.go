package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"go.yaml.in/yaml/v3"
)

// inputSchemaURL is the base URL of a workflow's input schema. The .invalid TLD never
// resolves (RFC 2606), and the offline loader refuses it anyway: a relative $ref resolves
// against it, fails to load, and is reported naming the ref as written.
const inputSchemaURL = "https://wend.invalid/input.schema.json"

// refKeywords are the keywords whose value is a URI the compiler may try to load.
var refKeywords = []string{"$ref", "$dynamicRef", "$recursiveRef", "$schema"}

// compileInputSchema compiles a workflow's `input` JSON Schema (draft 2020-12 unless it says
// otherwise with $schema), for ValidateInput when a run starts. It never touches the network or
// the file system: $refs must point inside the schema (#/$defs/...) or at a draft metaschema;
// any other ref is reported at the $ref that names it. Metaschema violations are rendered as
// schemaDiagnostics renders them, so when both run the duplicates collapse in Sorted.
func compileInputSchema(file string, input *yaml.Node) (*jsonschema.Schema, []Diagnostic) {
	return compileSchemaAt(file, "input", input)
}

// compileSchemaAt is compileInputSchema for a schema at path (input, signals.NAME.schema):
// findings name that path and sit at the schema's own lines.
func compileSchemaAt(file, path string, node *yaml.Node) (*jsonschema.Schema, []Diagnostic) {
	if node == nil {
		return nil, nil
	}
	jd, err := yamlToJSON(node)
	if err != nil {
		return nil, []Diagnostic{yamlJSONDiagnostic(file, err)}
	}
	src, err := json.Marshal(jd.value)
	if err != nil {
		return nil, []Diagnostic{schemaDiagnostic(file, path, jd, "", path+" schema is not JSON: "+err.Error())}
	}
	var refused []string
	c := withStepBudget(newOfflineCompiler(&refused))
	if err := c.AddResource(inputSchemaURL, bytes.NewReader(src)); err != nil {
		return nil, []Diagnostic{schemaDiagnostic(file, path, jd, "", "invalid "+path+" schema: "+strings.TrimPrefix(err.Error(), "jsonschema: "))}
	}
	s, err := compileSafely(c, inputSchemaURL)
	if err == nil {
		return s, nil
	}
	if len(refused) > 0 {
		var ds Diagnostics
		for _, u := range refused {
			ptr, written := findRef(jd.value, u)
			if written == "" {
				written = u
			}
			msg := fmt.Sprintf("%s %q is not allowed: schemas are never loaded from the network or files; define it under $defs", refKeywordOf(ptr), written)
			ds = append(ds, schemaDiagnostic(file, path, jd, ptr, msg))
		}
		return nil, ds.Sorted()
	}
	r := &schemaRenderer{instance: jd.value, noun: "key"}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return nil, r.diagnostics(file, path, jd, ve)
	}
	return nil, []Diagnostic{schemaDiagnostic(file, path, jd, "", "invalid "+path+" schema: "+schemaErrorText(err, path))}
}

// compileSafely compiles url with c, turning a panic into an error: jsonschema/v5 type-asserts
// keyword values it has already checked against the metaschema, but the schema comes from an
// untrusted file and a crash would take `wend validate` down with it.
func compileSafely(c *jsonschema.Compiler, url string) (s *jsonschema.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("schema compiler panicked: %v", p)
		}
	}()
	return c.Compile(url)
}

// schemaErrorText drops jsonschema's "jsonschema <url> compilation failed: " preamble, which
// names our internal URL rather than anything the author wrote.
func schemaErrorText(err error, path string) string {
	var se *jsonschema.SchemaError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	msg := strings.TrimPrefix(err.Error(), "jsonschema: ")
	return strings.ReplaceAll(msg, inputSchemaURL, path)
}

func schemaDiagnostic(file, path string, jd *jsonDoc, ptr, msg string) Diagnostic {
	d := Diagnostic{File: file, Path: wendPath(path, jd.value, ptr), Message: msg, Severity: SeverityError}
	d.Line, d.Column = problemPosition(jd, schemaProblem{ptr: ptr})
	return d
}

// findRef finds the ref keyword in schema whose value resolves to the refused URL, returning
// its JSON Pointer and the value as written. It resolves against the input's base URL only
// ($id changes of base are not followed), which finds every ref in practice; if none matches,
// the caller reports at the schema itself.
func findRef(schema any, refused string) (ptr, written string) {
	base, _ := url.Parse(inputSchemaURL)
	want := stripFragment(refused)
	var walk func(v any, p string, depth int) bool
	walk = func(v any, p string, depth int) bool {
		if depth > yamlJSONMaxDepth {
			return false
		}
		switch v := v.(type) {
		case map[string]any:
			for _, kw := range refKeywords {
				s, ok := v[kw].(string)
				if !ok {
					continue
				}
				u, err := url.Parse(s)
				if err != nil {
					continue
				}
				if stripFragment(base.ResolveReference(u).String()) == want || stripFragment(s) == want {
					ptr, written = p+"/"+escapePointer(kw), s
					return true
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys) // deterministic: report the first ref in key order
			for _, k := range keys {
				if walk(v[k], p+"/"+escapePointer(k), depth+1) {
					return true
				}
			}
		case []any:
			for i, item := range v {
				if walk(item, fmt.Sprintf("%s/%d", p, i), depth+1) {
					return true
				}
			}
		}
		return false
	}
	walk(schema, "", 0)
	return ptr, written
}

func stripFragment(s string) string {
	s, _, _ = strings.Cut(s, "#")
	return s
}

// refKeywordOf names the keyword at the end of ptr, or "$ref" when it is not known.
func refKeywordOf(ptr string) string {
	if kw := keywordOf("#" + ptr); slices.Contains(refKeywords, kw) {
		return kw
	}
	return "$ref"
}

// InputError is returned by ValidateInput when a run's input does not match the workflow's
// input schema. Problems are "path: message" lines such as
// `input.user_id: missing required property`, sorted.
type InputError struct {
	Problems []string
}

func (e *InputError) Error() string {
	return strings.Join(e.Problems, "; ")
}

// ValidateInput checks a run's input (a JSON value: map[string]any, []any, string, float64,
// json.Number, bool, nil) against a schema from compileInputSchema. A nil schema accepts
// anything. Mismatches are returned as *InputError with readable messages; input nested deeper
// than MaxDataDepth is ErrDataTooDeep and validation over MaxSchemaSteps is ErrSchemaBudget;
// other errors mean the input is not a JSON value.
func ValidateInput(s *jsonschema.Schema, input any) error {
	return ValidateInputContext(context.Background(), s, input)
}

// ValidateInputContext is ValidateInput that stops, returning ctx's error, when ctx is done:
// a request's validation ends when its client goes away.
func ValidateInputContext(ctx context.Context, s *jsonschema.Schema, input any) error {
	return validateAt(ctx, s, "input", input)
}

// validateAt is ValidateInput for a value named root in the problems (input, data).
func validateAt(ctx context.Context, s *jsonschema.Schema, root string, v any) error {
	if s == nil {
		return nil
	}
	if err := CheckDataDepth(root, v); err != nil {
		return err
	}
	err := validateSafely(ctx, s, v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("validate %s: %w", root, err)
	}
	r := &schemaRenderer{instance: v, noun: "property", keepAdditional: true, jsonWords: true}
	var problems []string
	for _, p := range r.problems(ve) {
		problems = append(problems, wendPath(root, v, p.ptr)+": "+p.msg)
	}
	slices.Sort(problems)
	return &InputError{Problems: slices.Compact(problems)}
}
