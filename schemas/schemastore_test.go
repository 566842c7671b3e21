package schemas

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// catalogEntry is one entry of SchemaStore's catalog (src/api/json/catalog.json).
type catalogEntry struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	FileMatch   []string `json:"fileMatch"`
	URL         string   `json:"url"`
}

func loadCatalog(t *testing.T) []catalogEntry {
	t.Helper()
	b, err := os.ReadFile("schemastore-catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema  string         `json:"$schema"`
		Version int            `json:"version"`
		Schemas []catalogEntry `json:"schemas"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a misspelt field would be dropped by SchemaStore
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("schemastore-catalog.json: %v", err)
	}
	if doc.Schema != "https://json.schemastore.org/schema-catalog.json" || doc.Version != 1 {
		t.Errorf("schemastore-catalog.json: $schema %q version %d, want SchemaStore's catalog schema, version 1", doc.Schema, doc.Version)
	}
	return doc.Schemas
}

// schemaID reads the $id a schema file declares.
func schemaID(t *testing.T, schema []byte) string {
	t.Helper()
	var s struct {
		ID string `json:"$id"`
	}
	if err := json.Unmarshal(schema, &s); err != nil || s.ID == "" {
		t.Fatalf("schema without $id: %v", err)
	}
	return s.ID
}

// TestSchemaStoreCatalogNamesRealIDs checks the SchemaStore catalogue entry kept in the repo
// (ready to submit): each entry points at the $id one of our schemas declares, every field
// SchemaStore requires is there, and its file patterns send each of the repository's
// workflow and test files to the right schema and to that one only.
func TestSchemaStoreCatalogNamesRealIDs(t *testing.T) {
	entries := loadCatalog(t)
	want := map[string]string{
		schemaID(t, Workflow):     "workflow",
		schemaID(t, WorkflowTest): "test",
	}
	if want[WorkflowID] != "workflow" || want[WorkflowTestID] != "test" {
		t.Fatalf("the Go constants disagree with the schemas' $id: %v", want)
	}
	kinds := map[string]catalogEntry{}
	for _, e := range entries {
		kind, ok := want[e.URL]
		if !ok {
			t.Errorf("entry %q: url %s is not the $id of workflow.schema.json or workflow-test.schema.json", e.Name, e.URL)
			continue
		}
		if e.Name == "" || e.Description == "" || len(e.FileMatch) == 0 {
			t.Errorf("entry %q lacks name, description or fileMatch", e.Name)
		}
		kinds[kind] = e
	}
	if len(kinds) != 2 || len(entries) != 2 {
		t.Fatalf("want one entry per schema, got %d entries for %d schemas", len(entries), len(kinds))
	}
	// Which entry a file name is matched by (SchemaStore's patterns without a slash match the
	// base name).
	route := func(name string) []string {
		var got []string
		for _, kind := range []string{"workflow", "test"} {
			for _, p := range kinds[kind].FileMatch {
				if ok, _ := path.Match(p, path.Base(name)); ok {
					got = append(got, kind)
					break
				}
			}
		}
		return got
	}
	for name, kind := range map[string]string{
		"order.wend.yaml": "workflow", "order.wend.yml": "workflow", "dir/x.y.wend.yaml": "workflow",
		"order.wend.test.yaml": "test", "order.wend.test.yml": "test",
	} {
		if got := route(name); len(got) != 1 || got[0] != kind {
			t.Errorf("%s goes to %v, want [%s]", name, got, kind)
		}
	}
	for _, name := range []string{"order.yaml", "wend.yaml", "order.wend.json", "order.test.yaml"} {
		if got := route(name); len(got) != 0 {
			t.Errorf("%s goes to %v, want none", name, got)
		}
	}
	files := 0
	err := filepath.WalkDir("../examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		kind := ""
		switch n := d.Name(); {
		case strings.HasSuffix(n, ".wend.test.yaml"), strings.HasSuffix(n, ".wend.test.yml"):
			kind = "test"
		case strings.HasSuffix(n, ".wend.yaml"), strings.HasSuffix(n, ".wend.yml"):
			kind = "workflow"
		default:
			return nil
		}
		files++
		if got := route(p); len(got) != 1 || got[0] != kind {
			t.Errorf("%s goes to %v, want [%s]", p, got, kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no workflow files found under examples/")
	}
}
