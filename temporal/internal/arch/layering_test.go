// Package arch checks the layering of the temporal module. The main module's arch test stops
// at the module boundary (go list ./... there does not reach here), so this module has its own.
package arch

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	wend   = "github.com/wendflow/wend"
	module = wend + "/temporal"
)

// allowed lists, per package of this module, the non-standard-library packages it may import
// directly (a prefix ending in "/" allows a tree); nil allows anything. Every package needs a
// rule.
var allowed = map[string][]string{
	// The wire contract: shapes only, so the worker and the CLI can share it cheaply.
	"wire": {wend + "/history"},
	// The workflow: the pure interpreter and the SDK's workflow-side packages, nothing that
	// touches a process, a file or the network.
	"driver": {wend + "/interpreter", wend + "/history", wend + "/spec", module + "/wire",
		"go.temporal.io/sdk/workflow", "go.temporal.io/sdk/temporal", "go.temporal.io/api/enums/v1"},
	"internal/arch": nil, // this test
}

// forbiddenDeps lists, per package, import path prefixes it must not reach even indirectly.
var forbiddenDeps = map[string][]string{
	"wire":   {"go.temporal.io/", "google.golang.org/", wend + "/interpreter", wend + "/spec", wend + "/plugins", wend + "/internal"},
	"driver": {wend + "/interpreter/engine", wend + "/boltstore", wend + "/plugins", wend + "/internal", wend + "/server", "go.temporal.io/sdk/client", "go.etcd.io/bbolt", "github.com/hashicorp"},
}

// reachable lists packages a forbidden prefix would cover that may still be reached indirectly.
// The spec package reads workflow files through inputfile's size limit; the driver links spec
// for the language but never calls its file reader, which replay could not repeat.
var reachable = []string{wend + "/internal/inputfile"}

func TestLayering(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath    string
			Imports, Deps []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		ok, has := allowed[rel]
		if !has {
			t.Errorf("package %s has no layering rule: add it to allowed in temporal/internal/arch/layering_test.go", rel)
			continue
		}
		checked++
		for _, imp := range p.Imports {
			if ok == nil || standard(imp) || slices.ContainsFunc(ok, func(a string) bool { return imp == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(imp, a)) }) {
				continue
			}
			t.Errorf("%s imports %s, which its rule does not allow", rel, imp)
		}
		for _, d := range p.Deps {
			if slices.Contains(reachable, d) {
				continue
			}
			for _, b := range forbiddenDeps[rel] {
				if strings.HasPrefix(d, b) {
					t.Errorf("%s depends on %s (forbidden: %s*)", rel, d, b)
				}
			}
		}
	}
	if checked < 3 {
		t.Fatalf("checked only %d packages; go list found too few", checked)
	}
}

// standard tells a standard-library import path: no dot in its first element, the rule the
// go command itself uses.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
