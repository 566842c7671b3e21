package arch

import (
	"os/exec"
	"strings"
	"testing"
)

// The Go client of the control API stays light enough for any program to import: at most 3
// packages outside the standard library, and at most 3 of wend's own (itself included), so
// talking to wend never drags in the engine, the store or the workflow language's parsers.
func TestClientDependencies(t *testing.T) {
	const maxThirdParty, maxOurs = 3, 3
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./api/client")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./api/client: %v", err)
	}
	var ours, others []string
	for _, p := range strings.Fields(string(out)) {
		if p == module || strings.HasPrefix(p, module+"/") {
			ours = append(ours, p)
		} else {
			others = append(others, p)
		}
	}
	if len(ours) == 0 {
		t.Fatal("go list -deps ./api/client named no package of wend's, not even the client")
	}
	if len(others) > maxThirdParty {
		t.Errorf("api/client imports %d packages outside the standard library, at most %d: %s", len(others), maxThirdParty, strings.Join(others, " "))
	}
	if len(ours) > maxOurs {
		t.Errorf("api/client imports %d of wend's packages, at most %d: %s", len(ours), maxOurs, strings.Join(ours, " "))
	}
}
