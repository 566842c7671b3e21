package arch

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
)

// ignoredDirs returns the directories go.mod's ignore directive leaves out of ./..., as
// ./relative paths go list accepts.
func ignoredDirs(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct{ Ignore []struct{ Path string } }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, ig := range mod.Ignore {
		dirs = append(dirs, ig.Path)
	}
	return dirs
}

// TestPreCommitInstallsOnlyWend: pre-commit's golang hooks run `go install ./...` in
// this repository, which puts every main package's binary first on the hook's PATH. ./... must
// hold exactly one main package, cmd/wend.
func TestPreCommitInstallsOnlyWend(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mains := strings.Fields(string(out))
	if !slices.Equal(mains, []string{module + "/cmd/wend"}) {
		t.Errorf("go install ./... would install %v; want only %s/cmd/wend (add the others to go.mod's ignore)", mains, module)
	}
}

// TestNoCommandShadowsAGoTool: a main package's binary is named after its folder, and `go build
// ./dir` or `go install` writes it under that name; a command in a folder named go or gofmt would
// put a binary of that name in the working directory or first on PATH. Every main package in the
// repository (every module, the folders go.mod ignores included) must have another name.
func TestNoCommandShadowsAGoTool(t *testing.T) {
	mains := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "../.." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil || f.Name.Name != "main" {
			return nil
		}
		mains++
		if dir := filepath.Base(filepath.Dir(path)); dir == "go" || dir == "gofmt" {
			t.Errorf("%s: package main in a folder named %s builds a binary named %s, which shadows Go's own: name the folder for what it does", path, dir, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if mains < 4 {
		t.Fatalf("found only %d files of main packages: the check lost its subject", mains)
	}
}

// TestPreCommitHooks: every hook runs wend; the -system hooks use the installed one.
func TestPreCommitHooks(t *testing.T) {
	data, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID, Entry, Language, Files string
		PassFilenames              *bool `yaml:"pass_filenames"`
	}
	if err := yamlv3.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ entry, language string }{
		"wend-validate":        {"wend validate", "golang"},
		"wend-test":            {"wend test --allow-none", "golang"},
		"wend-validate-system": {"wend validate", "system"},
		"wend-test-system":     {"wend test --allow-none", "system"},
		// args: [FOLDER] names the exports; the changed files follow
		"wend-validate-against":        {"wend validate --against", "golang"},
		"wend-validate-against-system": {"wend validate --against", "system"},
	}
	got := map[string]bool{}
	for _, h := range hooks {
		w, ok := want[h.ID]
		if !ok {
			t.Errorf("unexpected hook %q", h.ID)
			continue
		}
		got[h.ID] = true
		if h.Entry != w.entry || h.Language != w.language {
			t.Errorf("%s: entry %q language %q, want %q %q", h.ID, h.Entry, h.Language, w.entry, w.language)
		}
		if h.Files == "" || h.PassFilenames == nil {
			t.Errorf("%s: files and pass_filenames must be set", h.ID)
		}
	}
	for id := range want {
		if !got[id] {
			t.Errorf("hook %s missing", id)
		}
	}
}
