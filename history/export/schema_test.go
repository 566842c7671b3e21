package export_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/schemas"
)

func schemaDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(schemas.HistoryExport, &doc); err != nil {
		t.Fatalf("history-export.schema.json: %v", err)
	}
	return doc
}

// TestSchemaMatchesDocumentType walks Document and the schema side by side: every JSON field
// is a property, every property is a field, and a property is required exactly when its field
// is never omitted. A field added to the Go types without the schema (or the reverse) fails.
func TestSchemaMatchesDocumentType(t *testing.T) {
	root := schemaDoc(t)
	eq(t, "$id", root["$id"], any(schemas.HistoryExportID))
	eq(t, "$schema", root["$schema"], any("https://json-schema.org/draft/2020-12/schema"))
	defs := root["$defs"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			return defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		return s
	}
	rawJSON := reflect.TypeFor[json.RawMessage]()
	timeT := reflect.TypeFor[time.Time]()
	var walk func(path string, typ reflect.Type, s map[string]any)
	walk = func(path string, typ reflect.Type, s map[string]any) {
		s = resolve(s)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		want := ""
		switch {
		case typ == rawJSON:
			if _, typed := s["type"]; typed {
				t.Errorf("%s: a JSON value must accept any type", path)
			}
			return
		case typ == timeT:
			if s["type"] != "string" || s["format"] != "date-time" {
				t.Errorf("%s: a time must be a date-time string, schema says %v/%v", path, s["type"], s["format"])
			}
			return
		case typ.Kind() == reflect.String:
			want = "string"
			if _, isConst := s["const"]; isConst {
				return
			}
		case typ.Kind() == reflect.Bool:
			want = "boolean"
		case typ.Kind() == reflect.Float64:
			want = "number"
		case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Uint64:
			want = "integer"
		case typ.Kind() == reflect.Slice:
			want = "array"
			walk(path+"[]", typ.Elem(), s["items"].(map[string]any))
		case typ.Kind() == reflect.Map:
			want = "object"
			walk(path+"{}", typ.Elem(), s["additionalProperties"].(map[string]any))
		case typ.Kind() == reflect.Struct:
			want = "object"
			walkStruct(t, path, typ, s, walk)
		}
		if s["type"] != want {
			t.Errorf("%s: schema type %v, Go type %s", path, s["type"], typ)
		}
	}
	walk("", reflect.TypeFor[export.Document](), root)
}

func walkStruct(t *testing.T, path string, typ reflect.Type, s map[string]any, walk func(string, reflect.Type, map[string]any)) {
	t.Helper()
	if s["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties must be false", path)
	}
	props, _ := s["properties"].(map[string]any)
	var required []string
	for _, r := range s["required"].([]any) {
		required = append(required, r.(string))
	}
	var fields, wantRequired []string
	for f := range typ.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		fields = append(fields, name)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			wantRequired = append(wantRequired, name)
		}
		sub, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s.%s: field missing from the schema", path, name)
			continue
		}
		walk(path+"."+name, f.Type, sub)
	}
	for name := range props {
		if !slices.Contains(fields, name) {
			t.Errorf("%s.%s: in the schema, not in the Go type", path, name)
		}
	}
	slices.Sort(required)
	slices.Sort(wantRequired)
	if !slices.Equal(required, wantRequired) {
		t.Errorf("%s: required %v, want %v (the fields never omitted)", path, required, wantRequired)
	}
}

// TestSchemaDescribesEveryProperty: the schema is documentation for export consumers.
func TestSchemaDescribesEveryProperty(t *testing.T) {
	var visit func(ptr string, v any)
	visit = func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for name, p := range props {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("%s/properties/%s has no description", ptr, name)
				}
				visit(ptr+"/properties/"+name, p)
			}
		}
		for _, kw := range []string{"items", "additionalProperties"} {
			visit(ptr+"/"+kw, m[kw])
		}
		if defs, ok := m["$defs"].(map[string]any); ok {
			for name, d := range defs {
				visit(ptr+"/$defs/"+name, d)
			}
		}
	}
	visit("#", schemaDoc(t))
}

// TestSchemaRejects proves the validation in every other test can fail.
func TestSchemaRejects(t *testing.T) {
	s := sim.New(t, sim.Head+"steps: [{activity: p.x}]\n", nil)
	s.RunActivities(sim.Echo)
	good := exportOf(t, s)
	sch, err := exportSchema()
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(d map[string]any){
		"unknown top-level key": func(d map[string]any) { d["extra"] = 1 },
		"wrong schema version":  func(d map[string]any) { d["schema"] = "wend.history-export/v0" },
		"unknown status":        func(d map[string]any) { d["workflow"].(map[string]any)["status"] = "done" },
		"missing run_id":        func(d map[string]any) { delete(d["workflow"].(map[string]any), "run_id") },
		"bad time":              func(d map[string]any) { d["workflow"].(map[string]any)["started_at"] = "yesterday" },
		"attempt outcome": func(d map[string]any) {
			a := d["activities"].([]any)[0].(map[string]any)["attempts"].([]any)[0].(map[string]any)
			a["outcome"] = "ok"
		},
		"metric missing": func(d map[string]any) {
			delete(d["operator_metrics"].(map[string]any)["activities"].(map[string]any), "retrying")
		},
	} {
		var d map[string]any
		b, _ := json.Marshal(good)
		_ = json.Unmarshal(b, &d)
		mutate(d)
		if err := sch.Validate(d); err == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}
