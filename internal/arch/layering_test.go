package arch

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wendflow/wend"

// forbidden lists, per package of ours, import path prefixes it must not depend on, directly
// or through another package. (internal/faults is a leaf of failpoints the engine calls, so
// the packages above the engine may reach it through it.)
var forbidden = map[string][]string{
	"schemas":                      {module + "/", "go.yaml.in", "github.com/expr-lang", "google.golang.org/grpc"},
	"history":                      {module + "/", "go.etcd.io/bbolt", "google.golang.org/grpc", "github.com/hashicorp", "go.yaml.in"},
	"spec":                         {module + "/history", module + "/interpreter", module + "/plugins", module + "/boltstore", module + "/internal", "go.etcd.io/bbolt", "google.golang.org/grpc", "github.com/hashicorp"},
	"interpreter":                  {module + "/interpreter/engine", module + "/plugins", module + "/boltstore", module + "/internal", module + "/server", "go.etcd.io/bbolt", "google.golang.org/grpc", "github.com/hashicorp"},
	"interpreter/engine":           {module + "/plugins", module + "/boltstore", module + "/internal/cli", module + "/server", "go.etcd.io/bbolt", "google.golang.org/grpc", "github.com/hashicorp"},
	"boltstore":                    {module + "/interpreter", module + "/plugins", module + "/internal", module + "/server", module + "/spec", "google.golang.org/grpc"},
	"plugins":                      {module + "/spec", module + "/interpreter", module + "/boltstore", module + "/internal", module + "/server", "go.etcd.io/bbolt"},
	"plugins/sdk":                  {module + "/spec", module + "/interpreter", module + "/boltstore", module + "/internal", module + "/server", "go.etcd.io/bbolt"},
	"server":                       {module + "/internal/cli", module + "/internal/crashtest", module + "/boltstore", module + "/plugins", "go.etcd.io/bbolt", "google.golang.org/grpc", "github.com/hashicorp"},
	"internal/cli":                 {}, // the top: may import anything of ours
	"history/export":               {module + "/spec", module + "/interpreter", module + "/plugins", module + "/boltstore", module + "/internal", module + "/server", module + "/schemas", module + "/history/storetest", "go.etcd.io", "go.yaml.in", "google.golang.org", "golang.org/x", "github.com/expr-lang", "github.com/hashicorp", "github.com/santhosh-tekuri", "github.com/golang", "github.com/fatih", "github.com/mattn", "github.com/oklog", "github.com/rogpeppe"},
	"history/storetest":            {module + "/spec", module + "/interpreter", module + "/plugins", module + "/boltstore", "go.etcd.io/bbolt"},
	"internal/faults":              {module + "/"},
	"internal/proctest":            {module + "/"},
	"internal/simtest":             {module + "/interpreter/engine", module + "/history/", module + "/internal/", module + "/plugins", module + "/boltstore", module + "/server", module + "/bench", module + "/cmd", module + "/examples", "go.etcd.io/bbolt", "google.golang.org/grpc", "github.com/hashicorp"}, // the interpreter, history and spec only
	"wendtest":                     {module + "/interpreter/engine", module + "/boltstore", module + "/plugins", module + "/server", module + "/internal", "go.etcd.io/bbolt", "google.golang.org/grpc", "github.com/hashicorp"},                                                                                  // `wend test`: the interpreter, spec, history and schemas only
	"internal/crashtest":           {},
	"bench":                        {}, // a measuring tool over the engine and boltstore (PlainUpdate is its yardstick)
	"internal/arch":                {},
	"cmd/wend":                     {},
	"examples/plugins/go":          {module + "/spec", module + "/interpreter", module + "/boltstore", module + "/internal", module + "/server"},
	"plugins/proto/wend/plugin/v1": {module + "/spec", module + "/interpreter", module + "/boltstore", module + "/internal"},
}

// testOnly lists the test-support packages: tests import them, no package of ours may.
var testOnly = []string{module + "/internal/simtest"}

func TestLayering(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Deps", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		bad, ok := ruleFor(rel)
		if !ok {
			t.Errorf("package %s has no layering rule: add it to forbidden in %s", rel, "internal/arch/layering_test.go")
			continue
		}
		checked++
		for _, d := range p.Deps {
			if slices.Contains(testOnly, d) {
				t.Errorf("%s depends on %s, which only tests may import", rel, d)
			}
			for _, b := range bad {
				if strings.HasPrefix(d, b) && !strings.HasPrefix(d, p.ImportPath) {
					t.Errorf("%s depends on %s (forbidden: %s*); see DESIGN.md §1", rel, d, b)
				}
			}
		}
	}
	if checked < 4 {
		t.Fatalf("checked only %d packages; go list found too few", checked)
	}
}

// ruleFor finds the rule of the longest package key that is rel or a parent folder of rel.
func ruleFor(rel string) ([]string, bool) {
	for p := rel; ; {
		if bad, ok := forbidden[p]; ok {
			return bad, true
		}
		i := strings.LastIndex(p, "/")
		if i < 0 {
			return nil, false
		}
		p = p[:i]
	}
}
