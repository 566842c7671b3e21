package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wendflow/wend/api"
)

// A JSON Schema becomes a form: a field per property (strings, numbers, integers, booleans,
// enums, nested objects, arrays of scalars one item a line), the schema's description as
// help, its bounds as the page's own checks (required, min, max, minlength, maxlength,
// pattern). What a form cannot hold well (an array of objects, a oneOf, a $ref, a type list)
// is a JSON box for that part. The server builds the same form from the same schema to read
// the posted fields back into JSON, which the API's route checks against the schema again.
//
// A schema is the workflow author's, so it is bounded like any input: nesting past
// formMaxDepth and enums past formMaxOptions fall back to a JSON box or a text field, a form
// past formMaxFields is one JSON box, and titles and descriptions are clipped; html/template
// escapes every text, so markup in a schema is shown, never run.
const (
	formMaxDepth   = 6
	formMaxFields  = 200
	formMaxOptions = 100
	formMaxText    = 500 // a label, title or description
	formMaxPattern = 300
)

// Field kinds.
const (
	fieldString  = "string"
	fieldNumber  = "number"
	fieldInteger = "integer"
	fieldBoolean = "boolean"
	fieldEnum    = "enum"
	fieldObject  = "object"
	fieldLines   = "lines" // an array of scalars: one item a line
	fieldJSON    = "json"  // any JSON value, in a box
)

// formField is one field of a schema's form, or an object's group of fields.
type formField struct {
	Key      string // the form value's name (f0, f1, ...; "" for an object)
	Name     string // the property's name; "" for the root
	Label    string
	Help     string
	Kind     string
	Required bool
	Options  []formOption // an enum's (its values by index) or a boolean's
	// The page's checks, as HTML attributes ("" for none).
	Min, Max, Step, MinLen, MaxLen, Pattern string
	Default                                 string // the schema's default, as the field shows it
	ItemKind                                string // a lines field's items: string, number, integer, boolean
	Fields                                  []*formField
	Depth                                   int
	enum                                    []any // the enum's values, for reading the post
}

type formOption struct {
	Value, Label string
	Selected     bool
}

// schemaForm is a schema's form. JSON says it is one JSON box (no schema, or one too big to
// lay out); Why says why a schema became a box.
type schemaForm struct {
	Root *formField
	JSON bool
	Why  string
	Data string // the JSON box's text, kept when a post was refused
}

// buildForm lays out the form of schema (a decoded JSON Schema; nil for none).
func buildForm(schema any) schemaForm {
	if schema == nil {
		return schemaForm{JSON: true}
	}
	// One spelling of numbers whatever decoded the schema (YAML gives int64 and float64).
	raw, err := json.Marshal(schema)
	if err != nil {
		return schemaForm{JSON: true}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&schema) != nil {
		return schemaForm{JSON: true}
	}
	b := &formBuilder{}
	root := b.field(schema, "", "", false, 0)
	if b.n > formMaxFields {
		return schemaForm{JSON: true, Why: fmt.Sprintf("the schema has more than %d fields", formMaxFields)}
	}
	if root.Kind == fieldJSON {
		return schemaForm{JSON: true, Why: root.Help}
	}
	return schemaForm{Root: root}
}

type formBuilder struct{ n int }

func (b *formBuilder) field(s any, name, label string, required bool, depth int) *formField {
	b.n++
	key := "f" + strconv.Itoa(b.n-1)
	f := &formField{Key: key, Name: name, Label: clip(label), Required: required, Depth: depth}
	m, ok := s.(map[string]any)
	if !ok || b.n > formMaxFields {
		f.Kind = fieldJSON
		return f
	}
	if t, ok := m["title"].(string); ok && t != "" {
		f.Label = clip(t)
	}
	if d, ok := m["description"].(string); ok {
		f.Help = clip(d)
	}
	for _, k := range []string{"$ref", "oneOf", "anyOf", "allOf", "not", "if", "patternProperties"} {
		if _, has := m[k]; has {
			f.Kind = fieldJSON
			return f
		}
	}
	if e, ok := m["enum"].([]any); ok {
		b.enumField(f, e)
		if d, ok := m["default"]; ok && f.Kind == fieldEnum {
			defaultText(f, d)
		}
		return f
	}
	typ, _ := m["type"].(string)
	if typ == "" && m["properties"] != nil {
		typ = "object"
	}
	switch typ {
	case "string":
		f.Kind = fieldString
		f.MinLen, f.MaxLen = intAttr(m["minLength"]), intAttr(m["maxLength"])
		if p, ok := m["pattern"].(string); ok && len(p) <= formMaxPattern {
			// JSON Schema's pattern matches anywhere in the text; an HTML pattern must match
			// all of it. (A pattern the browser cannot compile is ignored there; the server
			// checks it still.)
			f.Pattern = ".*(?:" + p + ").*"
		}
	case "number", "integer":
		f.Kind, f.Step = fieldNumber, "any"
		if typ == "integer" {
			f.Kind, f.Step = fieldInteger, "1"
		}
		f.Min, f.Max = numAttr(m["minimum"]), numAttr(m["maximum"])
	case "boolean":
		f.Kind = fieldBoolean
		f.Options = []formOption{{Value: "true", Label: "yes"}, {Value: "false", Label: "no"}}
	case "object":
		if depth >= formMaxDepth {
			f.Kind = fieldJSON
			return f
		}
		f.Kind, f.Key = fieldObject, ""
		props, _ := m["properties"].(map[string]any)
		req := map[string]bool{}
		if r, ok := m["required"].([]any); ok {
			for _, n := range r {
				if s, ok := n.(string); ok {
					req[s] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if b.n > formMaxFields {
				break
			}
			f.Fields = append(f.Fields, b.field(props[n], n, n, req[n], depth+1))
		}
		if len(props) == 0 {
			f.Kind, f.Key = fieldJSON, key // an open object: any keys
		}
	case "array":
		items, _ := m["items"].(map[string]any)
		it, _ := items["type"].(string)
		if _, isEnum := items["enum"]; !isEnum && (it == "string" || it == "number" || it == "integer" || it == "boolean") {
			f.Kind, f.ItemKind = fieldLines, it
		} else {
			f.Kind = fieldJSON
		}
	default:
		f.Kind = fieldJSON
	}
	if d, ok := m["default"]; ok {
		f.Default = defaultText(f, d)
	}
	return f
}

func (b *formBuilder) enumField(f *formField, e []any) {
	if len(e) > formMaxOptions {
		f.Kind = fieldJSON // a list too long to choose from: typed as JSON, checked by the server
		f.Help = strings.TrimSpace(f.Help + fmt.Sprintf(" (one of %d values, as JSON)", len(e)))
		return
	}
	f.Kind, f.enum = fieldEnum, e
	for i, v := range e {
		label, ok := v.(string)
		if !ok {
			raw, _ := json.Marshal(v)
			label = string(raw)
		}
		f.Options = append(f.Options, formOption{Value: strconv.Itoa(i), Label: clip(label)})
	}
}

// defaultText is a default as its field shows it; an enum's or a boolean's marks its option.
func defaultText(f *formField, d any) string {
	switch f.Kind {
	case fieldEnum, fieldBoolean:
		for i := range f.Options {
			var v any = f.Options[i].Value == "true"
			if f.Kind == fieldEnum {
				v = f.enum[i]
			}
			if jsonEqual(v, d) {
				f.Options[i].Selected = true
			}
		}
		return ""
	case fieldString:
		s, _ := d.(string)
		return s
	case fieldNumber, fieldInteger:
		return numAttr(d)
	}
	return ""
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func clip(s string) string { return clipText(s, formMaxText) }

// intAttr is a non-negative integer keyword as an attribute ("" when absent or not one).
func intAttr(v any) string {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil && i >= 0 {
			return strconv.FormatInt(i, 10)
		}
	}
	return ""
}

// numAttr is a number keyword as an attribute ("" when absent or not a number).
func numAttr(v any) string {
	if n, ok := v.(json.Number); ok {
		if _, err := n.Float64(); err == nil {
			return n.String()
		}
	}
	return ""
}

// value reads the posted fields back into the JSON the form stands for: blank fields are
// left out; a field that does not read as its kind is an error naming it.
func (sf schemaForm) value(form url.Values) (json.RawMessage, error) {
	if sf.Root == nil { // the JSON box
		d := strings.TrimSpace(form.Get("data"))
		if d == "" {
			return nil, nil
		}
		if !json.Valid([]byte(d)) {
			return nil, api.NewError(api.CodeBadRequest, "the data is not JSON")
		}
		return json.RawMessage(d), nil
	}
	v, set, err := sf.Root.read(form, "")
	if err != nil {
		return nil, api.NewError(api.CodeBadRequest, err.Error())
	}
	if !set {
		return nil, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the data as typed: "<" stays "<"
	if err := enc.Encode(v); err != nil {
		return nil, api.NewError(api.CodeBadRequest, err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// read returns the field's value and whether it has one.
func (f *formField) read(form url.Values, at string) (any, bool, error) {
	where := strings.TrimPrefix(at+"."+f.Name, ".")
	if where == "" {
		where = "the value"
	}
	if f.Kind == fieldObject {
		out := map[string]any{}
		for _, c := range f.Fields {
			v, set, err := c.read(form, strings.TrimPrefix(at+"."+f.Name, "."))
			if err != nil {
				return nil, false, err
			}
			if set {
				out[c.Name] = v
			}
		}
		return out, len(out) > 0 || f.Required || f.Depth == 0, nil
	}
	raw := form.Get(f.Key)
	text := strings.TrimSpace(raw)
	if raw == "" || (text == "" && f.Kind != fieldString) {
		// Left blank: left out, so the schema's check names a required field a person
		// skipped, rather than take "" for an answer.
		if f.Kind == fieldLines && f.Required {
			return []any{}, true, nil
		}
		return nil, false, nil
	}
	switch f.Kind {
	case fieldString:
		return raw, true, nil
	case fieldEnum:
		i, err := strconv.Atoi(text)
		if err != nil || i < 0 || i >= len(f.enum) {
			return nil, false, fmt.Errorf("%s: choose one of the listed values", where)
		}
		return f.enum[i], true, nil
	case fieldLines:
		items := []any{}
		for _, ln := range strings.Split(raw, "\n") {
			if ln = strings.TrimSpace(ln); ln == "" {
				continue
			}
			v, err := scalar(f.ItemKind, ln)
			if err != nil {
				return nil, false, fmt.Errorf("%s: item %q: %v", where, ln, err)
			}
			items = append(items, v)
		}
		return items, true, nil
	case fieldJSON:
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			return nil, false, fmt.Errorf("%s: not JSON", where)
		}
		return v, true, nil
	}
	v, err := scalar(f.Kind, text)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", where, err)
	}
	return v, true, nil
}

// scalar reads one number, integer or boolean (a string is itself).
func scalar(kind, s string) (any, error) {
	switch kind {
	case fieldNumber:
		if _, err := strconv.ParseFloat(s, 64); err != nil || !json.Valid([]byte(s)) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return json.Number(s), nil
	case fieldInteger:
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return json.Number(s), nil
	case fieldBoolean:
		switch s {
		case "true", "yes":
			return true, nil
		case "false", "no":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", s)
	}
	return s, nil
}

// fill shows the posted values in the form again (a post the server refused keeps them).
func (sf *schemaForm) fill(form url.Values) {
	if sf.Root != nil {
		sf.Root.fill(form)
	}
	sf.Data = form.Get("data")
}

func (f *formField) fill(form url.Values) {
	for _, c := range f.Fields {
		c.fill(form)
	}
	if f.Key == "" {
		return
	}
	v, posted := form[f.Key]
	if !posted || len(v) == 0 {
		return
	}
	f.Default = v[0]
	for i := range f.Options {
		f.Options[i].Selected = f.Options[i].Value == v[0]
	}
}
