package needs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSize(t *testing.T) {
	for _, c := range []struct {
		name, all, env string
		want           int
	}{
		{"default loop", "", "", 3},
		{"full loop", "1", "", 20},
		{"any other value is the default loop", "yes", "", 3},
		{"the variable wins in the default loop", "", "7", 7},
		{"the variable wins in the full loop", "1", "7", 7},
		{"a bad variable is ignored", "1", "many", 20},
		{"zero is ignored", "", "0", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvAll, c.all)
			t.Setenv("WEND_NEEDS_TEST_N", c.env)
			if got := Size("WEND_NEEDS_TEST_N", 3, 20); got != c.want {
				t.Errorf("Size = %d, want %d", got, c.want)
			}
		})
	}
}

// fakeT records what a helper did to a test instead of stopping the real one.
type fakeT struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Skipf(format string, args ...any) {
	f.skipped = true
	f.msg = format
	panic(f)
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = format
	panic(f)
}

// run calls fn with a fakeT, catching the panic its Skipf or Fatalf raises as a real test's
// runtime.Goexit would stop it.
func run(fn func(testing.TB)) (f *fakeT) {
	f = &fakeT{}
	defer func() {
		if r := recover(); r != nil && r != f {
			panic(r)
		}
	}()
	fn(f)
	return f
}

func TestMissingToolSkipsOrFails(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // an empty PATH: no tool is found
	t.Setenv(EnvAll, "")
	f := run(func(tb testing.TB) { Tool(tb, "protoc", "apt-get install protobuf-compiler") })
	if !f.skipped || f.failed {
		t.Errorf("default loop: skipped=%v failed=%v, want a skip", f.skipped, f.failed)
	}
	t.Setenv(EnvAll, "1")
	f = run(func(tb testing.TB) { Tool(tb, "protoc", "apt-get install protobuf-compiler") })
	if !f.failed || f.skipped {
		t.Errorf("full loop: skipped=%v failed=%v, want a failure", f.skipped, f.failed)
	}
}

func TestPresentToolAndFileRunTheTest(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "mytool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv(EnvAll, "1")
	var path string
	f := run(func(tb testing.TB) {
		path = Tool(tb, "mytool", "install it")
		File(tb, tool, "make it")
	})
	if f.skipped || f.failed || path != tool {
		t.Errorf("skipped=%v failed=%v path=%q, want the test to go on with %q", f.skipped, f.failed, path, tool)
	}
	f = run(func(tb testing.TB) { File(tb, filepath.Join(dir, "node_modules"), "npm ci") })
	if !f.failed {
		t.Errorf("a missing file under %s=1 did not fail the test", EnvAll)
	}
}

func TestFullRunsOnlyInTheFullLoop(t *testing.T) {
	t.Setenv(EnvAll, "")
	if f := run(func(tb testing.TB) { Full(tb, "an hour of kills") }); !f.skipped {
		t.Error("Full did not skip in the default loop")
	}
	t.Setenv(EnvAll, "1")
	if f := run(func(tb testing.TB) { Full(tb, "an hour of kills") }); f.skipped || f.failed {
		t.Error("Full stopped the test in the full loop")
	}
}
