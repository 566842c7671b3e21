package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// published are the schemas editors and validators load by URL.
var published = []struct {
	name, id string
	doc      []byte
}{
	{"workflow.schema.json", WorkflowID, Workflow},
	{"workflow-test.schema.json", WorkflowTestID, WorkflowTest},
	{"history-export.schema.json", HistoryExportID, HistoryExport},
}

// TestSchemasWorkOffline: yaml-language-server drops hover, completion and checking for
// a whole file when its schema $refs a URL it cannot fetch (the workflow schema named the draft
// 2020-12 metaschema for `input`). Each schema must compile with a loader that refuses every
// URL, and hold no $ref (or $dynamicRef) that leaves the document.
func TestSchemasWorkOffline(t *testing.T) {
	for _, s := range published {
		t.Run(s.name, func(t *testing.T) {
			var loads []string
			c := jsonschema.NewCompiler()
			c.Draft = jsonschema.Draft2020
			c.LoadURL = func(url string) (io.ReadCloser, error) {
				loads = append(loads, url)
				return nil, fmt.Errorf("offline: refusing to load %s", url)
			}
			if err := c.AddResource(s.id, bytes.NewReader(s.doc)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile(s.id); err != nil {
				t.Fatalf("does not compile offline: %v", err)
			}
			if len(loads) > 0 {
				t.Errorf("compiling loaded %v", loads)
			}
			var doc any
			if err := json.Unmarshal(s.doc, &doc); err != nil {
				t.Fatal(err)
			}
			for _, r := range refs(doc, "") {
				t.Errorf("%s: remote reference %q; inline what it needs under $defs", r[0], r[1])
			}
		})
	}
}

// refs returns [pointer, value] of every $ref and $dynamicRef in v that is not local (#...).
func refs(v any, ptr string) [][2]string {
	var out [][2]string
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if s, ok := sub.(string); ok && (k == "$ref" || k == "$dynamicRef") && !strings.HasPrefix(s, "#") {
				out = append(out, [2]string{ptr + "/" + k, s})
			}
			out = append(out, refs(sub, ptr+"/"+k)...)
		}
	case []any:
		for i, sub := range v {
			out = append(out, refs(sub, fmt.Sprintf("%s/%d", ptr, i))...)
		}
	}
	return out
}

// TestRemoteRefFinder: the walk above finds a remote $ref at any depth (so the test can fail).
func TestRemoteRefFinder(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"properties":{"a":{"$ref":"#/$defs/x"},"b":{"items":[{"$ref":"https://json-schema.org/draft/2020-12/schema"}]}}}`), &doc)
	got := refs(doc, "")
	if len(got) != 1 || got[0][0] != "/properties/b/items/0/$ref" {
		t.Fatalf("refs = %v", got)
	}
}

// TestSchemaIDsAtProjectHome: the $ids are where the files are served from, the project's
// repository (a modeline or a SchemaStore entry can name them), not a domain that serves nothing.
func TestSchemaIDsAtProjectHome(t *testing.T) {
	for _, s := range published {
		var doc struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(s.doc, &doc); err != nil {
			t.Fatal(err)
		}
		want := "https://raw.githubusercontent.com/wendflow/wend/main/schemas/" + s.name
		if doc.ID != want || s.id != want {
			t.Errorf("%s: $id %q, constant %q, want %q", s.name, doc.ID, s.id, want)
		}
	}
}
