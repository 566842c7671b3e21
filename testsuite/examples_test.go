package testsuite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/schemas"
	"github.com/wendflow/wend/spec"
	"go.yaml.in/yaml/v3"
)

// TestExamples is what CI runs of `wend test examples/`: every workflow in examples/
// has a test file beside it, every case passes, and together they reach every step and run
// every compensation.
func TestExamples(t *testing.T) {
	var workflows []string
	err := filepath.WalkDir("../examples", func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() && de.Name() == "plugins" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".wend.yaml") {
			workflows = append(workflows, p)
		}
		return nil
	})
	if err != nil || len(workflows) < 10 {
		t.Fatalf("found %d example workflows (%v)", len(workflows), err)
	}
	for _, w := range workflows {
		if _, err := os.Stat(strings.TrimSuffix(w, ".wend.yaml") + Suffix); err != nil {
			t.Errorf("%s has no test file: %v", w, err)
		}
	}
	files, err := Find([]string{"../examples"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed > 0 || rep.Passed < 40 {
		var b strings.Builder
		rep.WriteText(&b, false)
		t.Fatalf("examples: %d passed, %d failed\n%s", rep.Passed, rep.Failed, b.String())
	}
	for _, u := range rep.Coverage {
		t.Errorf("%s:%d:%d: %s %s is exercised by no example case", u.Workflow, u.Line, u.Column, u.What, u.Step)
	}
}

// The JSON Schema offered to editors accepts every example test file and refuses the
// mistakes it can see.
func TestTestSchema(t *testing.T) {
	s, err := spec.CompileJSONSchema(schemas.WorkflowTest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(schemas.WorkflowTest), `"$id": "`+schemas.WorkflowTestID+`"`) {
		t.Errorf("the schema's $id is not %s", schemas.WorkflowTestID)
	}
	files, _ := Find([]string{"../examples", "testdata/report"})
	for _, f := range files {
		if err := s.Validate(yamlValue(t, f)); err != nil {
			t.Errorf("%s: the schema refuses a valid test file: %v", f, err)
		}
	}
	for _, name := range []string{"bad-status", "unknown-key", "no-cases", "no-workflow", "mock-bad-activity", "bad-duration", "at-and-after", "bad-timeout", "bad-attempt"} {
		f := "testdata/invalid/" + name + Suffix
		if err := s.Validate(yamlValue(t, f)); err == nil {
			t.Errorf("%s: the schema accepts it", f)
		}
	}
}

func yamlValue(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return norm(v)
}
