package plugins

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/testkit/needs"
)

// TestCommittedStubsMatchProto regenerates every committed stub of the plugin protocol (the Go
// package in the SDK module, the Python SDK's and the Ruby example plugin's gen/ directories)
// from the .proto files with the commands their generate scripts run, and fails when a
// committed file differs: a .proto edited without regenerating would otherwise ship plugins
// that speak the old protocol. It lives in the main module, whose tool directive pins the Go
// generators, so the SDK module requires none of them.
// The tools are Debian's (scripts/test installs them); a missing tool skips the language,
// saying which package provides it, and fails it under WEND_TEST_ALL=1 (scripts/test, CI).
func TestCommittedStubsMatchProto(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	proto := filepath.Join(root, "sdk/go/proto/wend/plugin/v1")
	extra := filepath.Join(root, "examples/plugins/proto")
	cases := []struct {
		name      string
		committed string   // directory of the committed stubs
		files     []string // the generated files in it
		tools     map[string]string
		args      func(out string) []string
	}{
		{
			name:      "go",
			committed: proto,
			files:     []string{"activities.pb.go", "activities_grpc.pb.go"},
			tools:     map[string]string{"protoc": "protobuf-compiler"},
			args: func(out string) []string {
				return []string{"protoc",
					"--plugin=protoc-gen-go=" + goTool(t, "protoc-gen-go"),
					"--plugin=protoc-gen-go-grpc=" + goTool(t, "protoc-gen-go-grpc"),
					"-I", proto, "--go_out=" + out, "--go_opt=paths=source_relative",
					"--go-grpc_out=" + out, "--go-grpc_opt=paths=source_relative", "activities.proto"}
			},
		},
		{
			name:      "python",
			committed: filepath.Join(root, "sdk/python/wend_plugin/_gen"),
			files: []string{"activities_pb2.py", "activities_pb2_grpc.py", "health_pb2.py",
				"health_pb2_grpc.py", "grpc_controller_pb2.py", "grpc_controller_pb2_grpc.py"},
			tools: map[string]string{"protoc": "protobuf-compiler", "grpc_python_plugin": "protobuf-compiler-grpc"},
			args: func(out string) []string {
				plugin, _ := exec.LookPath("grpc_python_plugin")
				return []string{"protoc", "--plugin=protoc-gen-grpc_python=" + plugin,
					"-I", proto, "-I", extra, "--python_out=" + out, "--grpc_python_out=" + out,
					"activities.proto", "health.proto", "grpc_controller.proto"}
			},
		},
		{
			name:      "ruby",
			committed: filepath.Join(root, "examples/plugins/ruby/gen"),
			files: []string{"activities_pb.rb", "activities_services_pb.rb", "health_pb.rb",
				"health_services_pb.rb", "grpc_controller_pb.rb", "grpc_controller_services_pb.rb"},
			tools: map[string]string{"grpc_tools_ruby_protoc": "ruby-grpc-tools"},
			args: func(out string) []string {
				return []string{"grpc_tools_ruby_protoc", "-I", proto, "-I", extra,
					"--ruby_out=" + out, "--grpc_out=" + out,
					"activities.proto", "health.proto", "grpc_controller.proto"}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for tool, pkg := range c.tools {
				needs.Tool(t, tool, "apt-get install "+pkg)
			}
			out := t.TempDir()
			args := c.args(out)
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = proto
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, b)
			}
			for _, f := range c.files {
				want, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatalf("the generator wrote no %s: %v", f, err)
				}
				got, err := os.ReadFile(filepath.Join(c.committed, f))
				if err != nil {
					t.Fatalf("committed stub missing: %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from what the .proto files generate: regenerate it (%s)",
						filepath.Join(c.committed, f), regenerate(c.name))
				}
			}
		})
	}
}

// goTool returns the path of a generator pinned by the main module's tool directive, building it if needed.
func goTool(t *testing.T, name string) string {
	b, err := exec.Command("go", "tool", "-n", name).Output()
	if err != nil {
		t.Fatalf("go tool -n %s: %v", name, err)
	}
	return strings.TrimSpace(string(b))
}

func regenerate(lang string) string {
	switch lang {
	case "go":
		return "cd sdk/go && go generate ./proto/..."
	case "python":
		return "sdk/python/generate.sh"
	default:
		return "examples/plugins/ruby/generate.sh"
	}
}
