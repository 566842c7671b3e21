package testsuite

import (
	"os"
	"path/filepath"
	"testing"
)

// runFiles writes a workflow (w.wend.yaml) and a test file (w.wend.test.yaml) whose
// `workflow:` names it, plus any extra files, and runs the test file.
func runFiles(t *testing.T, wf, test string, extra ...string) (*Report, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("w.wend.yaml", wf)
	for i := 0; i+1 < len(extra); i += 2 {
		write(extra[i], extra[i+1])
	}
	path := filepath.Join(dir, "w.wend.test.yaml")
	write("w.wend.test.yaml", "workflow: ./w.wend.yaml\n"+test)
	rep, err := Run([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, path
}

// onlyCase returns the report's single case, failing if the file could not run.
func onlyCase(t *testing.T, rep *Report) *CaseReport {
	t.Helper()
	if len(rep.Files) != 1 || len(rep.Files[0].Findings) > 0 || len(rep.Files[0].Cases) != 1 {
		t.Fatalf("want one runnable case; findings: %v", rep.Files[0].Findings)
	}
	return rep.Files[0].Cases[0]
}

const head = "wend: v1\nname: w\nplugins: {p: ./p}\n"
