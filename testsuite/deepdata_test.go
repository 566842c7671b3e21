package testsuite

import (
	"strings"
	"testing"

	"github.com/wendflow/wend/spec"
)

// TestDeepMockOutputRefused: a mock output, a case's input and a signal's data come from the
// test file, whose YAML nests at most spec.MaxDepth levels: data deeper than spec.MaxDataDepth
// is refused with its position before any schema runs.
func TestDeepMockOutputRefused(t *testing.T) {
	deep := strings.Repeat("[", spec.MaxDataDepth+1) + "1" + strings.Repeat("]", spec.MaxDataDepth+1)
	for _, c := range []struct{ name, src string }{
		{"mock output", "workflow: ./w.wend.yaml\nmocks:\n  - {activity: a.b, output: " + deep + "}\ncases: []\n"},
		{"case input", "workflow: ./w.wend.yaml\ncases:\n  - {name: c, input: " + deep + "}\n"},
		{"signal data", "workflow: ./w.wend.yaml\ncases:\n  - {name: c, signals: [{name: s, data: " + deep + "}]}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ds := Decode("t.wend.test.yaml", []byte(c.src))
			if !ds.HasErrors() || !strings.Contains(ds.Error(), "deeper than 64 levels") || ds[0].Line == 0 {
				t.Fatalf("findings: %v", ds)
			}
		})
	}
}
