package arch

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mainInternal is the main module's internal/ tree. Go only lets that module import it; the
// temporal modules sit inside its directory, so Go would let them too, and this test refuses.
const mainInternal = wend + "/internal/"

// movingOut lists main-module internal packages still imported here while other changes move
// them out, with what imports them. The test fails when an entry is no longer imported, so the
// list only shrinks: delete the entry then.
var movingOut = map[string]string{
	mainInternal + "simtest":   "the driver's and backend's tests (the in-memory host)",
	mainInternal + "apiclient": "the yardstick (the benchmarks' API client)",
}

// TestNoMainModuleInternal: no Go file of this module or of temporal/e2e, tests and every
// build tag included, imports a package under the main module's internal/. What this module
// needs of wend it gets from public packages (cli, server, failpoint, testkit/...), so a
// change inside internal/ never breaks the Temporal side unseen.
func TestNoMainModuleInternal(t *testing.T) {
	root := filepath.Join("..", "..")
	used := map[string]bool{}
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
			if _, ok := movingOut[imp]; ok {
				used[imp] = true
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
	var gone []string
	for imp := range movingOut {
		if !used[imp] {
			gone = append(gone, imp)
		}
	}
	sort.Strings(gone)
	for _, imp := range gone {
		t.Errorf("nothing here imports %s any more: delete it from movingOut in temporal/internal/arch/seam_test.go", imp)
	}
}
