package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wendflow/wend/testkit/needs"
)

// scriptNeeds are what `needs NAME...` in a script checks: each returns "" when the machine has
// it, else what to install.
var scriptNeeds = map[string]func() string{
	// The scripts run Debian's interpreter by its path (/usr/bin/python3), as the examples do:
	// a python3 earlier on the PATH (pyenv, a venv) may lack Debian's grpcio.
	"python": func() string { // the Python SDK and example plugin: Debian's grpcio and protobuf
		if exec.Command("/usr/bin/python3", "-c", "import grpc, google.protobuf").Run() != nil {
			return "/usr/bin/python3 with grpc and protobuf: apt-get install python3-grpcio python3-protobuf"
		}
		return ""
	},
	"node": func() string { // the Node.js SDK and example plugin, with their npm packages
		if _, err := exec.LookPath("node"); err != nil {
			return "node: apt-get install nodejs npm, then (cd sdk/node && npm ci) and (cd examples/plugins/node && npm ci)"
		}
		for _, dir := range []string{"sdk/node", "examples/plugins/node"} {
			if _, err := os.Stat(filepath.Join("../..", dir, "node_modules", "@grpc", "grpc-js")); err != nil {
				return "the npm packages of " + dir + ": (cd " + dir + " && npm ci)"
			}
		}
		return ""
	},
	"ruby": func() string { // the Ruby example plugin: Debian's grpc and google-protobuf gems
		if exec.Command("ruby", "-e", "require 'grpc'; require 'google/protobuf'").Run() != nil {
			return "ruby with grpc and google-protobuf: apt-get install ruby ruby-grpc ruby-google-protobuf"
		}
		return ""
	},
}

// needsCondition is the script condition [needs:NAME]: true when the machine has NAME (one of
// scriptNeeds). A script skips without it, saying what to install:
//
//	[!needs:python] skip 'needs python3 with grpc: apt-get install python3-grpcio python3-protobuf'
//
// Under WEND_TEST_ALL=1 (scripts/test, CI) a missing one fails the script instead, so the full
// loop never passes without running it.
func needsCondition(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "needs:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	check, ok := scriptNeeds[name]
	if !ok {
		return false, fmt.Errorf("unknown condition %q: needs: takes python, node or ruby", cond)
	}
	missing := check()
	if missing == "" {
		return true, nil
	}
	if needs.All() {
		return false, fmt.Errorf("missing %s (%s=1 requires it; scripts/test installs it)", missing, needs.EnvAll)
	}
	return false, nil
}
