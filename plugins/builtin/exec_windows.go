package builtin

import (
	"os/exec"
	"strings"
)

// platformEnv are the variables Windows programs need to start at all.
var platformEnv = []string{"SYSTEMROOT", "COMSPEC", "PATHEXT", "TEMP", "TMP"}

func shellArgv(argv []string) []string {
	return []string{"cmd", "/C", strings.Join(argv, " ")}
}

// ownGroup leaves cmd as it is: the host's kill-on-close Job Object holds the plugin and the
// commands it starts, and a cancel kills the command (exec.CommandContext's default).
func ownGroup(*exec.Cmd) {}
