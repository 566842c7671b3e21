// Package needs is a helper of wend's own tests, not an API: the one way a test asks for
// what a plain `go test ./...` with only Go installed lacks (a tool on the PATH, files a setup
// step makes), and how big a long test runs. Tests of every module import it; no product
// package may.
//
// Two loops use it. The default loop (`go test ./...`) skips a test whose tool is missing,
// saying what to install, and runs the long suites (process kills, power loss) at a size
// that passes on a loaded 2-core machine. The full loop (WEND_TEST_ALL=1: scripts/test and
// CI) fails such a test instead, so a machine that cannot run it says so, and runs the long
// suites at full size.
package needs

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// EnvAll is the variable that selects the full loop: scripts/test and CI set it to 1.
const EnvAll = "WEND_TEST_ALL"

// All reports whether the full loop runs (WEND_TEST_ALL=1).
func All() bool { return os.Getenv(EnvAll) == "1" }

// Missing skips the test (the default loop) or fails it (WEND_TEST_ALL=1), saying what is
// missing and what to do about it: `install` is a command or a sentence, e.g.
// "apt-get install protobuf-compiler".
func Missing(t testing.TB, what, install string) {
	t.Helper()
	if All() {
		t.Fatalf("%s: %s (%s=1 requires it; scripts/test installs it)", what, install, EnvAll)
	}
	t.Skipf("%s: %s (scripts/test installs it; %s=1 makes this a failure)", what, install, EnvAll)
}

// Tool returns the path of the command name on the PATH; without it the test skips, or fails
// under WEND_TEST_ALL=1, saying how to install it.
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" is not on the PATH", install)
	}
	return path
}

// File checks that path exists (a file or folder a setup step makes, such as node_modules);
// without it the test skips, or fails under WEND_TEST_ALL=1, saying how to make it.
func File(t testing.TB, path, install string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, path+" is missing", install)
	}
}

// Full skips a test that runs only in the full loop (it needs minutes, or a machine of its
// own), saying how to run it; under WEND_TEST_ALL=1 it returns.
func Full(t testing.TB, why string) {
	t.Helper()
	if !All() {
		t.Skipf("%s: runs in the full loop (%s=1, as scripts/test and CI set)", why, EnvAll)
	}
}

// Size is how many kills, runs or rounds a long test does: the integer in the environment
// variable env when it is set (a developer's own size), else full under WEND_TEST_ALL=1,
// else quick. env may be empty.
func Size(env string, quick, full int) int {
	if env != "" {
		if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
			return n
		}
	}
	if All() {
		return full
	}
	return quick
}
