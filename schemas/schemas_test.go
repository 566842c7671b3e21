package schemas

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mapExceptions are the object schemas that are maps of user-chosen keys, so they cannot set
// additionalProperties to false.
var mapExceptions = map[string]string{
	"/properties/input":                       "a JSON Schema; its own metaschema decides its keys",
	"/properties/plugins":                     "plugin name -> plugin; names are checked by propertyNames",
	"/properties/signals":                     "signal name -> declared signal",
	"/properties/secrets":                     "secret name -> where its value is",
	"/properties/limits":                      "plugin.activity -> limit; names are checked by propertyNames",
	"/properties/search":                      "search field name -> field; names are checked by propertyNames",
	"/$defs/step/properties/set":              "state key -> value",
	"/$defs/templateValue":                    "any value (with, output, set values)",
	"/properties/output":                      "any value",
	"/$defs/step/properties/with":             "any value",
	"/$defs/step/properties/steps":            "not an object",
	"/$defs/jsonSchema":                       "a JSON Schema; the metaschema decides its keys",
	"/$defs/jsonSchema/properties/properties": "property name -> schema",
	"/$defs/jsonSchema/properties/$defs":      "definition name -> schema",
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(Workflow))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("workflow.schema.json is not valid JSON: %v", err)
	}
	if dec.More() {
		t.Fatal("workflow.schema.json has trailing data")
	}
	return doc
}

func TestSchemaIdentity(t *testing.T) {
	doc := loadSchema(t)
	if doc["$id"] != WorkflowID {
		t.Errorf("$id = %v, want %s", doc["$id"], WorkflowID)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", doc["$schema"])
	}
}

// walkSchemas calls fn for every subschema of s (s included) with its JSON Pointer.
func walkSchemas(ptr string, s any, fn func(ptr string, s map[string]any)) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	fn(ptr, m)
	for _, kw := range []string{"properties", "$defs", "patternProperties"} {
		if sub, ok := m[kw].(map[string]any); ok {
			for name, v := range sub {
				walkSchemas(ptr+"/"+kw+"/"+name, v, fn)
			}
		}
	}
	for _, kw := range []string{"items", "additionalProperties", "propertyNames", "not", "if", "then", "else"} {
		if v, ok := m[kw]; ok {
			walkSchemas(ptr+"/"+kw, v, fn)
		}
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf", "prefixItems"} {
		if list, ok := m[kw].([]any); ok {
			for i, v := range list {
				walkSchemas(ptr+"/"+kw+"/"+strconv.Itoa(i), v, fn)
			}
		}
	}
}

func TestSchemaEveryPropertyHasDescription(t *testing.T) {
	walkSchemas("", loadSchema(t), func(ptr string, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			pm, _ := p.(map[string]any)
			if d, _ := pm["description"].(string); strings.TrimSpace(d) == "" {
				t.Errorf("%s/properties/%s has no description", ptr, name)
			}
		}
	})
}

func TestSchemaObjectsAreClosed(t *testing.T) {
	walkSchemas("", loadSchema(t), func(ptr string, s map[string]any) {
		_, hasProps := s["properties"]
		isObject := s["type"] == "object" || hasProps
		if !isObject {
			return
		}
		if _, ok := mapExceptions[ptr]; ok {
			return
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: object schema without additionalProperties: false", ptr)
		}
	})
}

// resolve follows local $refs.
func resolve(root, s map[string]any) map[string]any {
	for i := 0; i < 10; i++ {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return s
		}
		cur := any(root)
		for _, seg := range strings.Split(ref[2:], "/") {
			cur = cur.(map[string]any)[seg]
		}
		s = cur.(map[string]any)
	}
	return s
}

// objectForm returns the object schema of s: s itself, or its object alternative.
func objectForm(root, s map[string]any) map[string]any {
	s = resolve(root, s)
	if _, ok := s["properties"]; ok {
		return s
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		alts, _ := s[kw].([]any)
		for _, a := range alts {
			am := resolve(root, a.(map[string]any))
			if am["type"] == "object" {
				return am
			}
		}
	}
	return nil
}

func keysOf(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func propsOf(t *testing.T, root, s map[string]any, what string) map[string]any {
	t.Helper()
	obj := objectForm(root, s)
	if obj == nil {
		t.Fatalf("%s: no object form in schema", what)
	}
	props, _ := obj["properties"].(map[string]any)
	return props
}

type docTable struct {
	header []string
	rows   [][]string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// parseTables returns the markdown tables of doc in order.
func parseTables(doc string) []docTable {
	var tables []docTable
	var cur *docTable
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			cur = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cur == nil:
			tables = append(tables, docTable{header: cells})
			cur = &tables[len(tables)-1]
		case strings.Trim(cells[0], "-: ") == "":
			// separator row
		default:
			cur.rows = append(cur.rows, cells)
		}
	}
	return tables
}

func firstColumn(tb docTable) []string {
	var keys []string
	for _, r := range tb.rows {
		keys = append(keys, strings.Trim(r[0], "` "))
	}
	sort.Strings(keys)
	return keys
}

// braceKeys returns the keys of a `{a, b: c}` form in a type cell, or nil.
func braceKeys(cell string) []string {
	m := regexp.MustCompile(`\{([^{}$]*)\}`).FindStringSubmatch(cell)
	if m == nil {
		return nil
	}
	var keys []string
	for _, part := range strings.Split(m[1], ",") {
		k, _, _ := strings.Cut(part, ":")
		keys = append(keys, strings.TrimSpace(k))
	}
	sort.Strings(keys)
	return keys
}

// TestSchemaMatchesLanguageDoc keeps the schema and docs/language.md from drifting: the keys of
// every table (and of every {a, b} form in a type column) are exactly the schema's properties.
func TestSchemaMatchesLanguageDoc(t *testing.T) {
	raw, err := os.ReadFile("../docs/language.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	root := loadSchema(t)
	defs := root["$defs"].(map[string]any)

	var keyTables []docTable
	var kindTable *docTable
	for _, tb := range parseTables(doc) {
		switch tb.header[0] {
		case "key":
			keyTables = append(keyTables, tb)
		case "kind":
			kindTable = &tb
		}
	}
	if len(keyTables) != 5 || kindTable == nil {
		t.Fatalf("language.md: want 5 key tables (workflow, plugin, step, retry, schedule) and 1 kind table, got %d and %v", len(keyTables), kindTable != nil)
	}

	// The step's own keys: the kinds, the common keys and for_each's extra keys.
	extra := regexp.MustCompile("`for_each` also takes ([^\n]*)").FindStringSubmatch(doc)
	if extra == nil {
		t.Fatal("language.md: sentence \"`for_each` also takes ...\" not found")
	}
	stepKeys := slices.Concat(firstColumn(*kindTable), firstColumn(keyTables[2]))
	for _, m := range backticked.FindAllStringSubmatch(extra[1], -1) {
		if !slices.Contains(stepKeys, m[1]) {
			stepKeys = append(stepKeys, m[1])
		}
	}
	sort.Strings(stepKeys)

	cases := []struct {
		name   string
		schema map[string]any
		want   []string
		rows   [][]string
	}{
		{"workflow", root, firstColumn(keyTables[0]), keyTables[0].rows},
		{"plugin", defs["plugin"].(map[string]any), firstColumn(keyTables[1]), keyTables[1].rows},
		{"step", defs["step"].(map[string]any), stepKeys, append(slices.Clone(kindTable.rows), keyTables[2].rows...)},
		{"retry", defs["retry"].(map[string]any), firstColumn(keyTables[3]), keyTables[3].rows},
		{"schedule", defs["schedule"].(map[string]any), firstColumn(keyTables[4]), keyTables[4].rows},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			props := propsOf(t, root, c.schema, c.name)
			if got := keysOf(props); !slices.Equal(got, c.want) {
				t.Errorf("schema keys %v, language.md keys %v", got, c.want)
			}
			obj := objectForm(root, c.schema)
			required, _ := obj["required"].([]any)
			for _, row := range c.rows {
				key := strings.Trim(row[0], "` ")
				prop, ok := props[key].(map[string]any)
				if !ok {
					continue // reported above
				}
				docRequired := strings.Contains(row[1], "(required")
				if schemaRequired := slices.Contains(required, any(key)); docRequired != schemaRequired {
					t.Errorf("%s: required in language.md = %v, in schema = %v", key, docRequired, schemaRequired)
				}
				want := braceKeys(row[1])
				if want == nil {
					continue
				}
				if got := keysOf(propsOf(t, root, prop, key)); !slices.Equal(got, want) {
					t.Errorf("%s: schema keys %v, language.md %v", key, got, want)
				}
			}
		})
	}
}
