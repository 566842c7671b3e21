package arch

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mainInternal is the main module's internal/ tree. Go only lets that module import it; the
// temporal modules sit inside its directory, so Go would let them too, and this test refuses.
const mainInternal = wend + "/internal/"

// TestNoMainModuleInternal: no Go file of this module or of temporal/e2e, tests and every
// build tag included, imports a package under the main module's internal/. What this module
// needs of wend it gets from public packages (cli, server, failpoint, testkit/...), so a
// change inside internal/ never breaks the Temporal side unseen.
func TestNoMainModuleInternal(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// The go command ignores these directories; so does this test.
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil || !strings.HasPrefix(imp, mainInternal) {
				continue
			}
			rel, _ := filepath.Rel(root, path)
			t.Errorf("temporal/%s imports %s: the temporal modules use the main module's public packages only; make what it needs public (see docs/design.md, Layers)", filepath.ToSlash(rel), imp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d Go files under temporal/; the walk missed the modules", files)
	}
}
