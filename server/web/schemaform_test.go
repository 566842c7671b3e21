package web

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
)

func decodeSchema(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// describe lays a form out as one line a field: "key kind name [req] [attrs]".
func describe(f *formField) []string {
	if f == nil {
		return nil
	}
	var out []string
	if f.Kind == fieldObject {
		out = append(out, strings.TrimRight(fmt.Sprintf("%s%s obj %s", strings.Repeat(" ", f.Depth), f.Label, reqMark(f.Required)), " "))
		for _, c := range f.Fields {
			out = append(out, describe(c)...)
		}
		return out
	}
	parts := []string{f.Key, f.Kind}
	for _, p := range []string{f.Label, reqMark(f.Required)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	d := strings.Repeat(" ", f.Depth) + strings.Join(parts, " ")
	for _, a := range [][2]string{{"min", f.Min}, {"max", f.Max}, {"step", f.Step}, {"minlen", f.MinLen}, {"maxlen", f.MaxLen}, {"pattern", f.Pattern}, {"default", f.Default}, {"items", f.ItemKind}, {"help", f.Help}} {
		if a[1] != "" {
			d += " " + a[0] + "=" + a[1]
		}
	}
	for _, o := range f.Options {
		d += " [" + o.Value + ":" + o.Label
		if o.Selected {
			d += "*"
		}
		d += "]"
	}
	return append(out, d)
}

func reqMark(r bool) string {
	if r {
		return "req"
	}
	return ""
}

// A schema becomes its fields: each type its kind, bounds the page's checks, description
// help, default the value shown; what a form cannot hold is a JSON box for that part.
func TestBuildForm(t *testing.T) {
	for _, c := range []struct {
		name, schema string
		want         []string // "JSON" for one JSON box
	}{
		{"no schema", `null`, []string{"JSON"}},
		{"a string", `{"type":"string","minLength":2,"maxLength":9,"pattern":"^[a-z]+$","description":"who"}`,
			[]string{"f0 string minlen=2 maxlen=9 pattern=.*(?:^[a-z]+$).* help=who"}},
		{"a pattern that matches anywhere", `{"type":"string","pattern":"[0-9]"}`, []string{"f0 string pattern=.*(?:[0-9]).*"}},
		{"an object of each kind", `{"type":"object","required":["n","ok"],"properties":{
			"n":{"type":"integer","minimum":1,"maximum":5,"default":2},
			"x":{"type":"number","minimum":0.5},
			"ok":{"type":"boolean","default":true},
			"level":{"enum":["low","high",3],"default":"high","title":"Level"},
			"tags":{"type":"array","items":{"type":"string"}},
			"rows":{"type":"array","items":{"type":"object"}},
			"any":{"oneOf":[{"type":"string"},{"type":"number"}]},
			"open":{"type":"object"},
			"addr":{"type":"object","required":["zip"],"properties":{"zip":{"type":"string"}}}}}`,
			[]string{" obj",
				" addr obj",
				"  f2 string zip req",
				" f3 json any",
				" f4 enum Level [0:low] [1:high*] [2:3]",
				" f5 integer n req min=1 max=5 step=1 default=2",
				" f6 boolean ok req [true:yes*] [false:no]",
				" f7 json open",
				" f8 json rows",
				" f9 lines tags items=string",
				" f10 number x min=0.5 step=any"}},
		{"a $ref", `{"$ref":"#/defs/x"}`, []string{"JSON"}},
		{"a type list", `{"type":["string","null"]}`, []string{"JSON"}},
		{"not an object", `true`, []string{"JSON"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var schema any
			if c.schema != "null" {
				schema = decodeSchema(t, c.schema)
			}
			sf := buildForm(schema)
			got := describe(sf.Root)
			if sf.JSON {
				got = []string{"JSON"}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("form\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

const orderSchema = `{"type":"object","required":["approved","reviewer"],"properties":{
	"approved":{"type":"boolean"},
	"reviewer":{"type":"string"},
	"level":{"enum":["low","high",3]},
	"amount":{"type":"number"},
	"count":{"type":"integer"},
	"tags":{"type":"array","items":{"type":"integer"}},
	"extra":{"type":"array","items":{"type":"object"}},
	"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"}}}}}`

// The posted fields read back into the JSON they stand for: blank fields left out,
// an enum by its index, lines as an array, JSON boxes parsed; a field that does not read as
// its kind is an error naming it (the page checks first; a hand-made post reaches here).
func TestFormValue(t *testing.T) {
	sf := buildForm(decodeSchema(t, orderSchema))
	key := map[string]string{}
	var walk func(f *formField, at string)
	walk = func(f *formField, at string) {
		for _, c := range f.Fields {
			walk(c, strings.TrimPrefix(at+"."+c.Name, "."))
		}
		if f.Key != "" {
			key[at] = f.Key
		}
	}
	walk(sf.Root, "")
	post := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(key[kv[i]], kv[i+1])
		}
		return v
	}
	for _, c := range []struct {
		name string
		form url.Values
		want string // the JSON, or "error: ..."
	}{
		{"required only", post("approved", "true", "reviewer", "ann"), `{"approved":true,"reviewer":"ann"}`},
		{"required left blank", post("reviewer", ""), `{}`}, // the schema's check then names both
		{"every kind", post("approved", "false", "reviewer", "<b>bo</b>", "level", "2", "amount", "12.50", "count", "7",
			"tags", "1\n 2 \n\n3", "extra", `[{"a": 1}]`, "address.city", "Lyon"),
			`{"address":{"city":"Lyon"},"amount":12.50,"approved":false,"count":7,"extra":[{"a":1}],"level":3,"reviewer":"<b>bo</b>","tags":[1,2,3]}`},
		{"not a number", post("reviewer", "a", "amount", "12abc"), `error: amount: "12abc" is not a number`},
		{"not whole", post("reviewer", "a", "count", "1.5"), `error: count: "1.5" is not a whole number`},
		{"an enum index out of range", post("reviewer", "a", "level", "9"), `error: level: choose one of the listed values`},
		{"a bad line", post("reviewer", "a", "tags", "1\nx"), `error: tags: item "x": "x" is not a whole number`},
		{"a box that is not JSON", post("reviewer", "a", "extra", "[1,"), `error: extra: not JSON`},
		{"two values in a box", post("reviewer", "a", "extra", "[] []"), `error: extra: not JSON`},
		{"a boolean that is neither", post("reviewer", "a", "approved", "maybe"), `error: approved: "maybe" is not true or false`},
		{"NaN is no number", post("reviewer", "a", "amount", "NaN"), `error: amount: "NaN" is not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := sf.value(c.form)
			got := string(raw)
			if err != nil {
				got = "error: " + err.Error()
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	box := buildForm(nil)
	if raw, err := box.value(url.Values{"data": {` {"a":1} `}}); err != nil || string(raw) != `{"a":1}` {
		t.Errorf("the JSON box reads %s %v", raw, err)
	}
}

// hostileSchemas are schemas an author (or whoever edits the file) could write to break the
// page: deep nesting, a huge enum, thousands of properties, markup in every text.
func hostileSchemas() map[string]string {
	deep := `{"type":"string"}`
	for range 25 {
		deep = `{"type":"object","properties":{"a":` + deep + `}}`
	}
	var enum, props strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&enum, `%s"v%d"`, map[bool]string{true: ",", false: ""}[i > 0], i)
	}
	for i := range 900 {
		fmt.Fprintf(&props, `%s"p%d":{"type":"string"}`, map[bool]string{true: ",", false: ""}[i > 0], i)
	}
	markup := `</textarea></select></form><script>alert(1)</script><img src=x onerror=alert(2)>`
	html := fmt.Sprintf(`{"type":"object","title":%[1]q,"description":%[1]q,"required":[%[1]q],"properties":{
		%[1]q:{"type":"string","title":%[1]q,"description":%[1]q,"pattern":%[1]q,"default":%[1]q},
		"e":{"enum":[%[1]q,{"x":%[1]q}],"description":%[1]q},
		"o":{"type":"object","title":%[1]q,"properties":{"n":{"type":"number","description":%[1]q}}}}}`, markup)
	return map[string]string{"deep": deep, "enum": `{"enum":[` + enum.String() + `]}`,
		"wide": `{"type":"object","properties":{` + props.String() + `}}`, "html": html}
}

// Hostile schemas are bounded: nesting stops at formMaxDepth (a JSON box below), a huge
// enum is a JSON box, too many fields one box for all.
func TestBuildFormBounded(t *testing.T) {
	hs := hostileSchemas()
	deep := buildForm(decodeSchema(t, hs["deep"]))
	f, depth := deep.Root, 0
	for f != nil && f.Kind == fieldObject {
		f, depth = f.Fields[0], depth+1
	}
	if f == nil || f.Kind != fieldJSON || depth != formMaxDepth {
		t.Errorf("deep schema: %d object levels then %+v, want %d then a JSON box", depth, f, formMaxDepth)
	}
	if e := buildForm(decodeSchema(t, hs["enum"])); !e.JSON || e.Root != nil || !strings.Contains(e.Why, "one of 20000 values") {
		t.Errorf("a 20,000-value enum is not one JSON box: %+v", e)
	}
	if w := buildForm(decodeSchema(t, hs["wide"])); !w.JSON || !strings.Contains(w.Why, "more than 200 fields") {
		t.Errorf("900 properties laid out: JSON %v, %q", w.JSON, w.Why)
	}
}

// No schema and no post crashes the form or its reading.
func FuzzSchemaForm(f *testing.F) {
	for _, s := range hostileSchemas() {
		f.Add(s, "f0", "x")
	}
	f.Add(orderSchema, "f3", "1")
	f.Fuzz(func(t *testing.T, schema, key, val string) {
		var v any
		if json.Unmarshal([]byte(schema), &v) != nil {
			return
		}
		sf := buildForm(v)
		form := url.Values{key: {val}, "data": {val}}
		raw, err := sf.value(form)
		if err == nil && len(raw) > 0 && !json.Valid(raw) {
			t.Fatalf("value %q is not JSON", raw)
		}
		sf.fill(form)
	})
}

// The run page of a run that waits for signals with hostile schemas renders, bounded, with
// each schema's markup as text: no element, script or attribute the page did not write.
func TestHostileSchemaPage(t *testing.T) {
	f := newWebFixture(t)
	var src strings.Builder
	src.WriteString("wend: v1\nname: hostile\nsignals:\n")
	names := []string{"deep", "enum", "wide", "html"}
	hs := hostileSchemas()
	for _, n := range names {
		src.WriteString("  " + n + ": {schema: " + hs[n] + "}\n")
	}
	src.WriteString("steps:\n  - parallel:\n")
	for _, n := range names {
		src.WriteString("      - {wait_for_signal: " + n + "}\n")
	}
	f.start("h1", src.String())
	f.settle("h1", func(d api.RunDetail) bool { return len(d.Waits) == 4 })
	code, _, page := f.send(req{Method: "GET", Path: "/ui/runs/h1", Session: true})
	if code != 200 {
		t.Fatalf("%d %.500s", code, page)
	}
	if n := len(page); n > 400_000 {
		t.Errorf("the page is %d bytes", n)
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d scripts on the page, want its own one", n)
	}
	for _, bad := range []string{"<img", "<script>alert", "</textarea></select>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if o, c := strings.Count(page, "<form"), strings.Count(page, "</form>"); o != c || o < 5 {
		t.Errorf("%d forms opened, %d closed", o, c)
	}
	if n := strings.Count(page, `class="card schema-form answer"`); n != 4 {
		t.Errorf("%d signal forms, want 4", n)
	}
	if !strings.Contains(page, `pattern=".*(?:&lt;/textarea&gt;&lt;/select&gt;&lt;/form&gt;&lt;script&gt;alert(1)&lt;/script&gt;`) {
		t.Error("the pattern is not kept as an escaped attribute")
	}
}
