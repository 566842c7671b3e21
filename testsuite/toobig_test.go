package testsuite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/spec"
)

// TestTestFileOverTheLimitSaysTestFile: a test file over the size limit is refused unread
// past the limit, in words about test files, not workflows.
func TestTestFileOverTheLimitSaysTestFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.wend.test.yaml")
	if err := os.WriteFile(p, []byte("# "+strings.Repeat("x", spec.MaxFileBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || len(rep.Files) != 1 || len(rep.Files[0].Findings) != 1 {
		t.Fatalf("report %+v", rep)
	}
	want := "file is 1048578 bytes, over the 1048576-byte limit for a test file; split its cases over several test files"
	if got := rep.Files[0].Findings[0].Message; got != want {
		t.Fatalf("finding %q\nwant    %q", got, want)
	}
	// Given as bytes (a parser's caller), the same words.
	_, ds := Decode(p, []byte("# "+strings.Repeat("x", spec.MaxFileBytes)))
	if len(ds) != 1 || ds[0].Message != want {
		t.Fatalf("Decode findings %v", ds)
	}
}
