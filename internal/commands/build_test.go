package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builds holds the programs the tests build (wend, the example plugin, the test plugin at a
// version), each built once per test binary: a link of wend takes seconds on a loaded machine,
// and several tests run the same program.
var builds struct {
	mu   sync.Mutex
	dir  string
	bins map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// buildOnce builds `go build ARGS... -o BIN PKG` in the repository's root once per test binary
// (name tells the builds apart) and gives each test its own path to the result (a hard link,
// or a copy across file systems), so tests that count the processes running a program by its
// path see only their own.
func buildOnce(t *testing.T, name, pkg string, args ...string) string {
	t.Helper()
	builds.mu.Lock()
	if builds.bins == nil {
		builds.bins = map[string]*build{}
	}
	b := builds.bins[name]
	if b == nil {
		b = &build{}
		builds.bins[name] = b
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "wend-cli-test-")
		if err != nil {
			builds.mu.Unlock()
			t.Fatal(err)
		}
		builds.dir = dir
	}
	dir := builds.dir
	builds.mu.Unlock()
	b.once.Do(func() {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", append(append([]string{"build"}, args...), "-o", out, pkg)...)
		cmd.Dir = "../.."
		if o, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build %s: %v\n%s", pkg, err, o)
			return
		}
		b.path = out
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	own := filepath.Join(t.TempDir(), filepath.Base(name))
	if os.Link(b.path, own) != nil {
		data, err := os.ReadFile(b.path)
		if err == nil {
			err = os.WriteFile(own, data, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return own
}

// removeBuilds deletes what buildOnce built; TestMain calls it after the tests.
func removeBuilds() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
	}
}

// cleanupM is the testing.M TestMain hands testscript, removing the builds after the tests.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	defer removeBuilds()
	return c.m.Run()
}
