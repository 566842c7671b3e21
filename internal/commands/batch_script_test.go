package commands

import (
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdStdoutEnv sets an environment variable to the last command's stdout, trimmed:
//
//	exec wend cancel --where 'id ^= a' --yes
//	stdoutenv BATCH
//	exec wend batch show $BATCH
//
// It is how a script uses an id a command printed (a batch's).
func cmdStdoutEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stdoutenv NAME")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}
