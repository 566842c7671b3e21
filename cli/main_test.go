package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs this test binary as a binary built on this package when a plugin host starts
// it for a builtin plugin (plugins.Options.Self defaults to the running executable).
func TestMain(m *testing.M) {
	if os.Getenv("WEND_BUILTIN_PLUGIN") != "" {
		os.Exit(MainWith(Extensions{}))
	}
	os.Exit(m.Run())
}

// TestMainWithServesBuiltins: a run naming the builtin exec plugin starts this binary as the
// plugin, and MainWith serves it, so the step's command runs.
func TestMainWithServesBuiltins(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sh.wend.yaml")
	src := "wend: v1\nname: sh\nplugins: {sh: {builtin: exec}}\nsteps:\n" +
		"  - {id: hi, activity: sh.run, with: {argv: [echo, hello]}}\noutput: \"${{ steps.hi.output.stdout }}\"\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := do(Extensions{}, "run", file, "--db", filepath.Join(dir, "w.db"))
	if code != 0 || strings.TrimSpace(out) != `"hello\n"` {
		t.Fatalf("run = %d, %q\n%s", code, out, errs)
	}
}
