package plugins

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// pythonProgram matches python, python3, python3.12 and the like.
var pythonProgram = regexp.MustCompile(`^python[0-9.]*$`)

// interpreterHint says what to do when a plugin run by a Python interpreter exits before its
// handshake. The usual cause is the interpreter itself: `python3` is looked up on PATH, and a
// pyenv or virtualenv python first on PATH lacks Debian's grpcio, which is installed for
// /usr/bin/python3 only. program is the resolved interpreter, so the hint names the one that ran.
func interpreterHint(plugin, program, stderrTail string) string {
	if !pythonProgram.MatchString(filepath.Base(program)) {
		return ""
	}
	why := "exited at once (a missing grpcio or protobuf is the usual cause)"
	if strings.Contains(stderrTail, "No module named") {
		why = "lacks a module the plugin imports"
	}
	return fmt.Sprintf("; the interpreter was %s, which %s: install grpcio and protobuf for it "+
		"(pip install grpcio protobuf) or name one that has them, e.g. plugins: {%s: {command: [/usr/bin/python3, SCRIPT]}} "+
		"with Debian's python3-grpcio and python3-protobuf, or a virtualenv's bin/python", program, why, plugin)
}
