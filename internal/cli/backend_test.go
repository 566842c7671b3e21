package cli

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// buildDemo builds the example Go plugin once for the scripts ($DEMO), so workflows in
// them can call real activities in a real plugin process.
func buildDemo(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "demo")
	cmd := exec.Command("go", "build", "-o", out, "./examples/plugins/go")
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the example plugin: %v\n%s", err, b)
	}
	return out
}

// scriptCmds are the commands the scripts add to testscript's.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(*testscript.TestScript, bool, []string){"eventually": cmdEventually}
}

// cmdEventually runs a command again and again until its stdout matches a pattern:
//
//	eventually 'signal "approve"' wend show order-1
//
// It is how a script waits for a background process to reach a state (a run waiting for a
// signal) without sleeping a fixed time. It gives up after 30 seconds.
func cmdEventually(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: eventually PATTERN COMMAND [ARGS...]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ts.Exec(args[1], args[2:]...) == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("eventually: %q never matched the stdout of %v", args[0], args[1:])
		}
		time.Sleep(100 * time.Millisecond)
	}
}
