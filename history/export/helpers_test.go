package export_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/schemas"
)

var update = flag.Bool("update", os.Getenv("UPDATE") != "", "rewrite the golden files (or set UPDATE=1)")

// exportSchema is the published schema, compiled with a loader that refuses every URL: the
// 2020-12 metaschema comes from jsonschema/v5's built-in copy, nothing from the network.
var exportSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, errors.New("remote schema loading is disabled: " + url)
	}
	if err := c.AddResource(schemas.HistoryExportID, bytes.NewReader(schemas.HistoryExport)); err != nil {
		return nil, err
	}
	return c.Compile(schemas.HistoryExportID)
})

// exportOf builds the export of the sim's history so far, checks it against the schema and
// checks that building again gives the same bytes (the export is a function of the history).
func exportOf(t *testing.T, s *sim.Sim) *export.Document {
	t.Helper()
	doc, err := export.Build(s.Record(), s.Events)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	js := validate(t, doc)
	again, err := export.Build(s.Record(), s.Events)
	if err != nil {
		t.Fatal(err)
	}
	if js2, _ := json.Marshal(again); !bytes.Equal(js, js2) {
		t.Fatal("two exports of the same history differ")
	}
	return doc
}

// validate marshals doc and validates it against schemas/history-export.schema.json.
func validate(t *testing.T, doc *export.Document) []byte {
	t.Helper()
	sch, err := exportSchema()
	if err != nil {
		t.Fatalf("compile history-export schema: %v", err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("marshal export: %v", err)
	}
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("export does not match schemas/history-export.schema.json: %#v\n%s", err, js)
	}
	return js
}

// golden compares got with testdata/name, or rewrites it with -update / UPDATE=1.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (UPDATE=1 rewrites it after review):\n%s", path, diff(string(want), string(got)))
	}
}

// diff shows the first differing lines, enough to see what moved.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i, shown := 0, 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want: %s\n  got:  %s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
