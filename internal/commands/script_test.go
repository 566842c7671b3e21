package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/wendflow/wend/plugins/builtin"
)

func TestMain(m *testing.M) {
	if name := builtin.Requested(); name != "" { // a builtin plugin started from this test binary
		os.Exit(builtin.Serve(name))
	}
	// A -race build sleeps a second as it exits (GORACE's atexit_sleep_ms, 1000 by default),
	// and the scripts run this test binary as wend about 800 times: 0 here, unless GORACE sets
	// it, and testscript passes GORACE on to the scripts' commands. Races are caught while the
	// commands run as before; only the pause for races with goroutines still running at exit goes.
	if gorace := os.Getenv("GORACE"); !strings.Contains(gorace, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace("atexit_sleep_ms=0 "+gorace))
	}
	testscript.Main(cleanupM{m}, map[string]func(){
		"wend": func() { os.Exit(Main()) },
	})
}

// TestScripts runs testdata/script/*.txtar: each command with a success case, a usage error
// and a runtime error, comparing exact output. $EXAMPLES is the repository's examples/ folder,
// $DEMO the example Go plugin's binary; `eventually` waits for a background process;
// [needs:python], [needs:node], [needs:ruby] hold when the machine has that language's plugin
// runtime (see needsCondition).
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	demo := buildDemo(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("EXAMPLES", examples)
			e.Setenv("DEMO", demo) // the example Go plugin, built once
			return nil
		},
		Cmds:          scriptCmds(),
		Condition:     needsCondition,
		UpdateScripts: os.Getenv("UPDATE") != "",
	})
}
