package testsuite

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden compares got with testdata/NAME; UPDATE=1 rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE") != "" {
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
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestInvalidTestFilesGolden runs each testdata/invalid file: it must not run, and its
// findings (file:line:col, path, message) are the golden ones.
func TestInvalidTestFilesGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*" + Suffix)
	if err != nil || len(files) < 20 {
		t.Fatalf("found %d invalid test files (%v), want at least 20", len(files), err)
	}
	var out bytes.Buffer
	for _, f := range files {
		rep, err := Run([]string{f}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fr := rep.Files[0]
		if len(fr.Findings) == 0 || rep.Failed != 1 {
			t.Errorf("%s: no findings; want the file refused", f)
			continue
		}
		out.WriteString(fr.Findings.Sorted().Error() + "\n")
	}
	golden(t, "invalid.golden", out.Bytes())
}

// TestFailedCaseReportGolden: a failed expectation prints its file:line:col, expected and
// actual, and the case's timeline; a case that cannot run says why; a failure names its step
// by id.
func TestFailedCaseReportGolden(t *testing.T) {
	rep, err := Run([]string{"testdata/report/hello.wend.test.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 1 || rep.Failed != 3 {
		t.Fatalf("passed %d failed %d, want 1 and 3", rep.Passed, rep.Failed)
	}
	var text, junit bytes.Buffer
	rep.WriteText(&text, true)
	golden(t, "report.golden", text.Bytes())
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.junit.golden", junit.Bytes())
	if !strings.Contains(text.String(), "testdata/report/hello.wend.test.yaml:16:15: cases[1].expect.output") {
		t.Error("the output mismatch does not point at its line")
	}
}
