package arch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clock lists the time functions that read or wait on the wall clock.
var clock = map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}

// TestDriverIsDeterministic: the driver is workflow code, replayed on any worker at any
// time, so it must decide the same from the same history. It may not start goroutines, use
// select, read the clock, or range over a map (Go randomises that order); it uses
// workflow.Go, workflow.Now and keyed map access instead.
func TestDriverIsDeterministic(t *testing.T) {
	dir := filepath.Join("..", "..", "driver")
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, n, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 3 {
		t.Fatalf("found %d driver files", len(files))
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", exportData(t))}
	if _, err := conf.Check("github.com/wendflow/wend/temporal/driver", fset, files, info); err != nil {
		t.Fatalf("type-check the driver: %v", err)
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a go statement in workflow code: use workflow.Go", fset.Position(n.Pos()))
			case *ast.SelectStmt:
				t.Errorf("%s: select in workflow code: use workflow.Selector", fset.Position(n.Pos()))
			case *ast.RangeStmt:
				if tv, ok := info.Types[n.X]; ok {
					if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
						t.Errorf("%s: range over a map in workflow code: its order differs on every replay", fset.Position(n.Pos()))
					}
				}
			case *ast.SelectorExpr:
				if fn, ok := info.Uses[n.Sel].(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "time" && clock[fn.Name()] {
					t.Errorf("%s: time.%s in workflow code: use workflow.Now / workflow.NewTimer", fset.Position(n.Pos()), fn.Name())
				}
			}
			return true
		})
	}
}

// exportData finds the compiled export data of the driver's dependencies (go list -export
// builds them), so the type check needs no source of the SDK.
func exportData(t *testing.T) func(path string) (io.ReadCloser, error) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export", "./driver")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	files := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		files[p.ImportPath] = p.Export
	}
	return func(path string) (io.ReadCloser, error) {
		if files[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(files[path])
	}
}
