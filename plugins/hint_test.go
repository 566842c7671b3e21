package plugins

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-hints", false, "rewrite testdata/interpreter_hints.golden")

// TestInterpreterHint: a Python plugin that exits before its handshake gets the grpcio hint
// only when its stderr is silent or names grpc or protobuf; a module it lacks that is not
// grpc's is named; another cause its stderr names gets no hint; a non-Python program none.
// The messages are in testdata/interpreter_hints.golden.
func TestInterpreterHint(t *testing.T) {
	tests := []struct {
		name, program, stderr string
		grpcio, named         bool
	}{
		{"silent", "/usr/bin/python3", "", true, false},
		{"grpc missing", "/home/u/.venv/bin/python3.12", "ModuleNotFoundError: No module named 'grpc'", true, false},
		{"protobuf missing", "/usr/bin/python3", "ModuleNotFoundError: No module named 'google.protobuf'", true, false},
		{"grpc import fails", "/usr/bin/python3", "ImportError: cannot import name 'x' from 'grpc._channel'", true, false},
		{"another module missing", "/usr/bin/python3", "ModuleNotFoundError: No module named 'requests'", false, true},
		{"the plugin's own error", "/usr/bin/python3", "  File \"plugin.py\", line 3\n    def f(:\nSyntaxError: invalid syntax", false, false},
		{"the plugin raised", "/usr/bin/python3", "KeyError: 'API_TOKEN'", false, false},
		{"not python", "/usr/bin/node", "", false, false},
	}
	var golden strings.Builder
	for _, tt := range tests {
		got := interpreterHint("billing", tt.program, tt.stderr)
		if strings.Contains(got, "pip install grpcio") != tt.grpcio {
			t.Errorf("%s: grpcio hint %v, want %v: %q", tt.name, !tt.grpcio, tt.grpcio, got)
		}
		if strings.Contains(got, "lacks the module") != tt.named {
			t.Errorf("%s: names the missing module %v, want %v: %q", tt.name, !tt.named, tt.named, got)
		}
		fmt.Fprintf(&golden, "%s: %q\n", tt.name, got)
	}
	path := filepath.Join("testdata", "interpreter_hints.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if golden.String() != string(want) {
		t.Errorf("hints differ from %s (go test -run TestInterpreterHint -update-hints):\n%s", path, golden.String())
	}
}
