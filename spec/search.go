package spec

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// SearchField is one entry of a workflow's `search:` (docs/language.md, Search fields): a
// typed value computed from the run's input and state, kept on the run's record so runs can
// be listed by it (`wend list --where 'customer = "ann"'`).
type SearchField struct {
	Name  string
	Type  string // one of SearchTypes
	Value *Value // over input, state and run
	Pos   Pos
}

// Search field types.
const (
	SearchString = "string"
	SearchNumber = "number"
	SearchBool   = "bool"
	SearchTime   = "time"
)

// SearchTypes lists the types a search field may have, for messages.
var SearchTypes = []string{SearchString, SearchNumber, SearchBool, SearchTime}

// MaxSearchFields bounds a workflow's search fields: each is evaluated after every change of
// state and kept in the run's record.
const MaxSearchFields = 32

// MaxSearchString bounds a string search value, in bytes: longer values are not kept (a note
// says so), since the record is rewritten when a value changes.
const MaxSearchString = 256

// ReservedSearchNames are the filter keys wend list --where has for every run: a search field
// of one of these names could never be filtered by.
var ReservedSearchNames = []string{"status", "workflow", "name", "id", "started", "and"}

var searchName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// search decodes `search:`; checkSearch checks the expressions.
func (d *decoder) search(w *Workflow, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return // the JSON Schema says what it should be
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := "search." + k.Value
		if !plainKey(k.Value) {
			path = "search[" + fmt.Sprintf("%q", k.Value) + "]"
		}
		if !searchName.MatchString(k.Value) {
			continue // the schema says what a name may be
		}
		if slices.Contains(ReservedSearchNames, k.Value) {
			d.errorf(k, path, "search field name %q is a filter every run has (%s); choose another name", k.Value, "status, workflow, name, id, started")
			continue
		}
		if len(w.SearchOrder) == MaxSearchFields {
			d.errorf(k, path, "more than %d search fields", MaxSearchFields)
			return
		}
		f := &SearchField{Name: k.Value, Pos: posOf(k)}
		if v.Kind != yaml.MappingNode {
			continue
		}
		d.fields(v, path, []string{"type", "value"}, func(key string, _, v2 *yaml.Node) {
			switch key {
			case "type":
				f.Type = str(v2) // the schema names the types
			case "value":
				f.Value = newValue(v2, path+".value", d.badValue)
			}
		})
		if w.Search == nil {
			w.Search = map[string]*SearchField{}
		}
		w.Search[f.Name] = f
		w.SearchOrder = append(w.SearchOrder, f.Name)
	}
}

// search checks each field's expressions (they may read input, state and run, not steps) and
// a literal value's type.
func (c *checker) search() {
	for _, name := range c.w.SearchOrder {
		f := c.w.Search[name]
		if f.Value == nil || !slices.Contains(SearchTypes, f.Type) {
			continue // the schema or the decoder said what is missing
		}
		before := len(c.diags)
		c.value(f.Value, &scope{c: c})
		if refs := f.Value.StepRefs(); len(refs) > 0 {
			// Compiling found the step ids; the scope's "not run on every path" says less.
			c.diags = c.diags[:before]
			c.errorf(f.Value.Pos, f.Value.Path, "a search field reads input and state, not steps.%s: set the value into state with the step's set, and read state here", refs[0])
			continue
		}
		if f.Value.IsLiteral() {
			if _, err := f.Coerce(f.Value.Lit); err != nil {
				c.errorf(f.Value.Pos, f.Value.Path, "%v", err)
			}
		}
	}
}

// Coerce turns a value computed for f into the value kept on the run's record: a string, a
// float64, a bool, or a time as RFC 3339 text in UTC. nil (a state key not set yet) stays nil:
// the run has no value for f. A value of another type is an error naming the field.
func (f *SearchField) Coerce(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("search field %s: %s, want a %s", f.Name, why, f.Type)
	}
	switch f.Type {
	case SearchString:
		s, ok := v.(string)
		if !ok {
			return nil, bad(fmt.Sprintf("got %s", jsonTypeName(v)))
		}
		if len(s) > MaxSearchString {
			return nil, bad(fmt.Sprintf("got a string of %d bytes, more than %d", len(s), MaxSearchString))
		}
		return s, nil
	case SearchNumber:
		n, ok := searchFloat(v)
		if !ok || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, bad(fmt.Sprintf("got %s", jsonTypeName(v)))
		}
		return n, nil
	case SearchBool:
		b, ok := v.(bool)
		if !ok {
			return nil, bad(fmt.Sprintf("got %s", jsonTypeName(v)))
		}
		return b, nil
	case SearchTime:
		s, ok := v.(string)
		if !ok {
			return nil, bad(fmt.Sprintf("got %s", jsonTypeName(v)))
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, bad(fmt.Sprintf("got %q, not an RFC 3339 time like 2026-05-01T12:00:00Z", s))
		}
		return t.UTC().Format(time.RFC3339Nano), nil
	}
	return nil, fmt.Errorf("search field %s: unknown type %q", f.Name, f.Type)
}

func searchFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

// jsonTypeName names v's JSON type for messages.
func jsonTypeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a bool"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	if _, ok := searchFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
