package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"go.yaml.in/yaml/v3"

	"github.com/wendflow/wend/schemas"
)

// errSchemaLoadRefused is what every JSON Schema compiler in wend answers when asked to load a
// schema by URL: schemas come from the binary (the workflow schema, the draft metaschemas that
// jsonschema/v5 ships) or from the workflow file itself, never from the network or disk.
var errSchemaLoadRefused = errors.New("loading schemas by URL is disabled")

// schemaLoadAttempts counts refused loads, so tests can prove nothing tried to fetch.
var schemaLoadAttempts atomic.Int64

// newOfflineCompiler returns a draft 2020-12 compiler whose loader refuses every URL, recording
// each refused URL in *refused when refused is not nil. jsonschema/v5 resolves the draft
// metaschemas (https://json-schema.org/draft/2020-12/schema and its vocabularies) from copies
// compiled into the library before it consults LoadURL, so refusing everything still lets a
// schema $ref the metaschema.
//
// Formats are asserted: a workflow author who writes `format: date-time` means it, and the
// metaschema's `format: regex` on `pattern` then catches a bad regex at validate time.
// Content keywords (contentEncoding, contentMediaType) stay annotations, as draft 2020-12
// specifies.
func newOfflineCompiler(refused *[]string) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.AssertContent = false
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		schemaLoadAttempts.Add(1)
		if refused != nil {
			*refused = append(*refused, url)
		}
		return nil, fmt.Errorf("load %s: %w", url, errSchemaLoadRefused)
	}
	return c
}

// workflowSchema is the embedded workflow schema, compiled once per process.
var workflowSchema = sync.OnceValues(func() (*workflowSchemaDoc, error) {
	dec := json.NewDecoder(bytes.NewReader(schemas.Workflow))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("parse workflow schema: %w", err)
	}
	c := newOfflineCompiler(nil)
	if err := c.AddResource(schemas.WorkflowID, bytes.NewReader(schemas.Workflow)); err != nil {
		return nil, fmt.Errorf("add workflow schema: %w", err)
	}
	s, err := c.Compile(schemas.WorkflowID)
	if err != nil {
		return nil, fmt.Errorf("compile workflow schema: %w", err)
	}
	return &workflowSchemaDoc{schema: s, raw: raw}, nil
})

type workflowSchemaDoc struct {
	schema *jsonschema.Schema
	raw    any // the schema as JSON, to read errorMessage and const when rendering errors
}

// schemaDiagnostics checks a parsed workflow file (a document or its root mapping) against
// schemas/workflow.schema.json and reports each leaf failure at the YAML position it is about.
// Unknown keys are not reported here: the decoder reports them with "did you mean" suggestions.
func schemaDiagnostics(file string, doc *yaml.Node) []Diagnostic {
	ws, err := workflowSchema()
	if err != nil {
		return []Diagnostic{{File: file, Message: "internal error: " + err.Error(), Severity: SeverityError}}
	}
	jd, err := yamlToJSON(doc)
	if err != nil {
		return []Diagnostic{yamlJSONDiagnostic(file, err)}
	}
	verr := validateSafely(context.Background(), ws.schema, jd.value)
	if verr == nil {
		return nil
	}
	r := &schemaRenderer{
		raw:          map[string]any{schemas.WorkflowID: ws.raw},
		instance:     jd.value,
		noun:         "key",
		reportedByGo: reportedByGo,
	}
	return r.diagnostics(file, "", jd, verr)
}

// reportedByGo are the workflow schema's parts whose failures the decoder, the checker or
// compileInputSchema report in their own words (a step's kind, fields that need another, the
// input schema against the full metaschema): the schema states them for editors.
var reportedByGo = []string{"/$defs/step/oneOf", "/$defs/step/dependentRequired", "/$defs/step/allOf", "/$defs/jsonSchema/", "/$defs/jsonType/"}

// validateSafely validates v with s, turning a panic inside the validator into an error: the
// instance comes from an untrusted file and a crash would take `wend validate` down with it.
// A schema compiled withStepBudget stops over its budget (ErrSchemaBudget) or when ctx is done; its
// validations take turns, since the budget counts one at a time.
func validateSafely(ctx context.Context, s *jsonschema.Schema, v any) (err error) {
	if b := budgetOf(s); b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.start(ctx)
		defer func() { b.ctx = nil }()
	}
	defer func() {
		if p := recover(); p != nil {
			if stop, ok := p.(budgetStop); ok {
				err = stop.err
				return
			}
			err = fmt.Errorf("internal error: schema validation panicked: %v", p)
		}
	}()
	return s.Validate(v)
}

func yamlJSONDiagnostic(file string, err error) Diagnostic {
	d := Diagnostic{File: file, Message: err.Error(), Severity: SeverityError}
	var ye *yamlJSONError
	if errors.As(err, &ye) {
		d.Line, d.Column, d.Message = ye.line, ye.column, ye.msg
	}
	return d
}

// diagnostics turns a validation error into positioned diagnostics. prefix is the wend path of
// jd's root ("" for a document, "input" for the input schema).
func (r *schemaRenderer) diagnostics(file, prefix string, jd *jsonDoc, err error) []Diagnostic {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		d := Diagnostic{File: file, Path: prefix, Message: strings.TrimPrefix(err.Error(), "jsonschema: "), Severity: SeverityError}
		if n := jd.nodes[""]; n != nil {
			d.Line, d.Column = n.Line, n.Column
		}
		return []Diagnostic{d}
	}
	var ds Diagnostics
	for _, p := range r.problems(ve) {
		d := Diagnostic{File: file, Path: wendPath(prefix, jd.value, p.ptr), Message: p.msg, Severity: SeverityError}
		d.Line, d.Column = problemPosition(jd, p)
		ds = append(ds, d)
	}
	return ds.Sorted()
}

// problemPosition finds the node a problem is about: the key for key problems, the mapping
// for a missing key, else the value (or, failing that, its nearest positioned ancestor).
func problemPosition(jd *jsonDoc, p schemaProblem) (line, col int) {
	ptr := p.ptr
	if p.onKey {
		if k := jd.keys[ptr]; k != nil {
			return k.Line, k.Column
		}
	}
	if p.missing {
		ptr = parentPointer(ptr)
	}
	for {
		if n := jd.nodes[ptr]; n != nil && n.Line > 0 {
			return n.Line, n.Column
		}
		if k := jd.keys[ptr]; k != nil && k.Line > 0 {
			return k.Line, k.Column
		}
		if ptr == "" {
			return 0, 0
		}
		ptr = parentPointer(ptr)
	}
}

func parentPointer(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i >= 0 {
		return ptr[:i]
	}
	return ""
}

// schemaProblem is one leaf failure: where (a JSON Pointer into the instance), what, and
// whether it is about the mapping key at ptr (propertyNames) or a missing key.
type schemaProblem struct {
	ptr     string
	kw      string // the failing keyword, e.g. "type"
	onKey   bool
	missing bool
	msg     string
	types   []string // for kw == "type": the expected types
}

// schemaRenderer turns jsonschema's error tree into short messages a workflow author reads.
type schemaRenderer struct {
	raw      map[string]any // schema documents by base URL, to read errorMessage, const, required
	instance any
	noun     string // what a mapping entry is called: "key" (workflow files) or "property" (inputs)
	// keepAdditional reports additionalProperties failures instead of dropping them (the
	// workflow decoder reports unknown keys itself, with suggestions).
	keepAdditional bool
	// reportedByGo are schema fragments (prefixes) whose failures are reported elsewhere.
	reportedByGo []string
	// jsonWords names containers as JSON does (object, array): the instance is JSON data (an
	// input or signal data), not a YAML file, whose words are mapping and list.
	jsonWords bool
}

// word is a container's name in the instance's language: "mapping" or "list" in a YAML
// file, "object" or "array" in JSON data.
func (r *schemaRenderer) word(yamlWord string) string {
	if !r.jsonWords {
		return yamlWord
	}
	switch yamlWord {
	case "mapping":
		return "object"
	case "list":
		return "array"
	case "a mapping":
		return "an object"
	case "a list":
		return "an array"
	}
	return yamlWord
}

// problems flattens the error tree to its leaves, resolving oneOf/anyOf, deduplicated.
func (r *schemaRenderer) problems(ve *jsonschema.ValidationError) []schemaProblem {
	var out []schemaProblem
	r.collect(ve, &out, 0)
	seen := map[string]bool{}
	var uniq []schemaProblem
	for _, p := range out {
		if p.kw == "additionalProperties" && !r.keepAdditional {
			continue
		}
		key := p.ptr + "\x00" + p.msg + "\x00" + strconv.FormatBool(p.onKey)
		if !seen[key] {
			seen[key] = true
			uniq = append(uniq, p)
		}
	}
	return uniq
}

// maxErrorDepth bounds the walk over an error tree; trees are as deep as the instance, which
// the loader caps at 64 levels, times a few schema levels per instance level.
const maxErrorDepth = 1000

func (r *schemaRenderer) collect(ve *jsonschema.ValidationError, out *[]schemaProblem, depth int) {
	if ve == nil || depth > maxErrorDepth {
		return
	}
	if frag := fragmentOf(ve.AbsoluteKeywordLocation); slices.ContainsFunc(r.reportedByGo, func(p string) bool { return strings.HasPrefix(frag, p) }) {
		return
	}
	kw := keywordOf(ve.AbsoluteKeywordLocation)
	switch {
	case (kw == "oneOf" || kw == "anyOf") && len(ve.Causes) > 0:
		r.alternatives(ve, kw, out, depth)
	case len(ve.Causes) > 0 && kw != "minContains":
		for _, c := range ve.Causes {
			r.collect(c, out, depth+1)
		}
	default:
		*out = append(*out, r.leaf(ve, kw)...)
	}
}

// alternatives renders a failed oneOf/anyOf. An alternative whose only failures are type
// mismatches at the same place is a form the value is not written in; if exactly one
// alternative is of the value's form, its own failures are the useful ones (delay: {until: 5}
// reports until). Otherwise one problem says which forms are allowed, from the schema's
// errorMessage or the alternatives' types.
func (r *schemaRenderer) alternatives(ve *jsonschema.ValidationError, kw string, out *[]schemaProblem, depth int) {
	var candidates [][]schemaProblem
	var types []string
	for _, alt := range ve.Causes {
		var leaves []schemaProblem
		r.collect(alt, &leaves, depth+1)
		mismatch := len(leaves) > 0
		for _, l := range leaves {
			if l.kw != "type" || l.ptr != ve.InstanceLocation || l.onKey {
				mismatch = false
				break
			}
		}
		if mismatch {
			for _, l := range leaves {
				types = appendUnique(types, l.types...)
			}
			continue
		}
		candidates = append(candidates, leaves)
	}
	if len(candidates) == 1 {
		*out = append(*out, candidates[0]...)
		return
	}
	for _, c := range candidates {
		for _, l := range c {
			if l.ptr == ve.InstanceLocation && l.kw == "type" {
				types = appendUnique(types, l.types...)
			}
		}
	}
	ptr := ve.InstanceLocation
	expected := r.hint(parentPointer(fragmentOf(ve.AbsoluteKeywordLocation)), baseOf(ve.AbsoluteKeywordLocation))
	if expected == "" && len(types) > 0 {
		expected = strings.Join(types, " or ")
	}
	if expected == "" {
		expected = "one of the allowed forms"
	}
	*out = append(*out, schemaProblem{ptr: ptr, kw: kw, msg: "expected " + expected + ", got " + r.describe(ptr, false)})
}

func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// leaf renders one failing keyword.
func (r *schemaRenderer) leaf(ve *jsonschema.ValidationError, kw string) []schemaProblem {
	ptr := ve.InstanceLocation
	p := schemaProblem{ptr: ptr, kw: kw, onKey: aboutPropertyName(ve.KeywordLocation)}
	frag, base := fragmentOf(ve.AbsoluteKeywordLocation), baseOf(ve.AbsoluteKeywordLocation)
	hint := r.hint(parentPointer(frag), base)
	msg := ve.Message
	switch kw {
	case "type":
		p.types = expectedTypes(msg)
		for i, t := range p.types {
			p.types[i] = r.word(t)
		}
		if hint != "" {
			p.msg = "expected " + hint + ", got " + r.describe(ptr, p.onKey)
		} else {
			p.msg = "expected " + strings.Join(p.types, " or ") + ", got " + r.typeName(ptr, p.onKey)
		}
	case "pattern", "minLength", "maxLength", "format":
		switch {
		case hint != "":
			p.msg = "expected " + hint + ", got " + r.describe(ptr, p.onKey)
		case kw == "pattern":
			p.msg = "must match " + strings.TrimPrefix(msg, "does not match pattern ")
		case kw == "format":
			p.msg = "expected a valid " + strings.Trim(afterLast(msg, " is not valid "), "'") + ", got " + r.describe(ptr, p.onKey)
		case kw == "minLength" && strings.HasPrefix(msg, "length must be >= 1,"):
			p.msg = "must not be empty"
		default:
			p.msg, _, _ = strings.Cut(msg, ",")
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		p.msg, _, _ = strings.Cut(msg, " but found")
	case "minItems":
		if strings.HasPrefix(msg, "minimum 1 items") {
			p.msg = "must not be empty"
		} else {
			n, _, _ := strings.Cut(strings.TrimPrefix(msg, "minimum "), " ")
			p.msg = "must have at least " + n + " items"
		}
	case "maxItems":
		n, _, _ := strings.Cut(strings.TrimPrefix(msg, "maximum "), " ")
		p.msg = "must have at most " + n + " items"
	case "const", "enum":
		p.msg = strings.TrimPrefix(msg, "value ")
		if c, ok := r.lookup(frag, base); ok && kw == "const" {
			p.msg = "must be " + jsonText(c)
		}
	case "required":
		var ps []schemaProblem
		for _, name := range quotedNames(strings.TrimPrefix(msg, "missing properties: ")) {
			ps = append(ps, schemaProblem{ptr: ptr + "/" + escapePointer(name), kw: kw, missing: true, msg: "missing required " + r.noun})
		}
		return ps
	case "additionalProperties":
		var ps []schemaProblem
		names := strings.TrimSuffix(strings.TrimPrefix(msg, "additionalProperties "), " not allowed")
		for _, name := range quotedNames(names) {
			ps = append(ps, schemaProblem{ptr: ptr + "/" + escapePointer(name), kw: kw, onKey: true, msg: "unknown " + r.noun})
		}
		return ps
	case "oneOf":
		p.msg = "matches more than one allowed form"
	default:
		p.msg = strings.TrimPrefix(msg, "jsonschema: ")
	}
	return []schemaProblem{p}
}

// aboutPropertyName reports whether a keyword location runs through propertyNames, i.e. the
// failure is about a mapping key, not its value.
func aboutPropertyName(kwLoc string) bool {
	toks := splitPointer(kwLoc)
	for i, t := range toks {
		if t == "propertyNames" && (i == 0 || !slices.Contains([]string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}, toks[i-1])) {
			return true
		}
	}
	return false
}

// hint returns what the schema at frag in the document base expects, from its errorMessage
// ("expected a duration like 30s", written for editors), if any.
func (r *schemaRenderer) hint(frag, base string) string {
	s, ok := r.lookup(frag, base)
	if !ok {
		return ""
	}
	m, _ := s.(map[string]any)
	h, _ := m["errorMessage"].(string)
	return strings.TrimPrefix(h, "expected ")
}

// lookup returns the value at JSON Pointer frag of the schema document base.
func (r *schemaRenderer) lookup(frag, base string) (any, bool) {
	doc, ok := r.raw[base]
	if !ok {
		return nil, false
	}
	return jsonValueAt(doc, frag)
}

// describe renders the instance value at ptr (or the key, for key problems) for a message.
func (r *schemaRenderer) describe(ptr string, onKey bool) string {
	if onKey {
		toks := splitPointer(ptr)
		if len(toks) > 0 {
			return quoteShort(toks[len(toks)-1])
		}
	}
	v, ok := jsonValueAt(r.instance, ptr)
	if !ok {
		return "nothing"
	}
	switch v := v.(type) {
	case string:
		return quoteShort(v)
	case map[string]any:
		return r.word("a mapping")
	case []any:
		return r.word("a list")
	default:
		return jsonText(v)
	}
}

// jsonText renders a scalar as JSON text.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// typeName is the JSON type of the instance value at ptr, with YAML's words for containers.
func (r *schemaRenderer) typeName(ptr string, onKey bool) string {
	if onKey {
		return "string"
	}
	v, _ := jsonValueAt(r.instance, ptr)
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return r.word("mapping")
	case []any:
		return r.word("list")
	case json.Number:
		if _, err := v.Int64(); err == nil || !strings.ContainsAny(string(v), ".eE") {
			return "integer"
		}
		return "number"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case float32:
		return "number"
	default:
		return "integer"
	}
}

// expectedTypes parses jsonschema's "expected X or Y, but got Z".
func expectedTypes(msg string) []string {
	list, _, _ := strings.Cut(strings.TrimPrefix(msg, "expected "), ", but got")
	var out []string
	for _, t := range strings.Split(list, " or ") {
		switch t {
		case "object":
			t = "mapping"
		case "array":
			t = "list"
		}
		out = append(out, t)
	}
	return out
}

// quotedNames parses jsonschema's list of single-quoted names: 'a', 'b\'c'.
func quotedNames(s string) []string {
	var names []string
	for s = strings.TrimSpace(s); strings.HasPrefix(s, "'"); {
		var b strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '\''; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		}
		names = append(names, b.String())
		s = strings.TrimSpace(strings.TrimPrefix(s[min(i+1, len(s)):], ","))
	}
	return names
}

func quoteShort(s string) string {
	const limit = 40
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "..."
	}
	return strconv.Quote(s)
}

func afterLast(s, sep string) string {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return s
}

// keywordOf returns the last token of a keyword location ("type" for ...#/$defs/x/type).
func keywordOf(absLoc string) string {
	toks := splitPointer(fragmentOf(absLoc))
	if len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}

func fragmentOf(absLoc string) string {
	_, frag, _ := strings.Cut(absLoc, "#")
	return frag
}

func baseOf(absLoc string) string {
	base, _, _ := strings.Cut(absLoc, "#")
	return base
}
