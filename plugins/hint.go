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
// handshake. When its stderr is silent or names grpc or protobuf, the usual cause is the
// interpreter itself: `python3` is looked up on PATH, and a pyenv or virtualenv python first on
// PATH lacks Debian's grpcio, which is installed for /usr/bin/python3 only. A module it lacks
// that is not grpc's is named as such; any other cause its stderr names (a syntax error, an
// exception of the plugin's) speaks for itself, so no hint. program is the resolved
// interpreter, so the hint names the one that ran.
func interpreterHint(plugin, program, stderrTail string) string {
	if !pythonProgram.MatchString(filepath.Base(program)) {
		return ""
	}
	missing := ""
	if m := missingModule.FindStringSubmatch(stderrTail); m != nil {
		missing = m[1]
	}
	switch {
	case missing != "" && !grpcModule(missing):
		return fmt.Sprintf("; the interpreter was %s, which lacks the module %q the plugin imports: install the package "+
			"that provides it for that interpreter (%s -m pip install ...) or name one that has it, e.g. "+
			"plugins: {%s: {command: [/path/to/venv/bin/python, SCRIPT]}}", program, missing, program, plugin)
	case missing == "" && strings.TrimSpace(stderrTail) != "" && !mentionsGRPC(stderrTail):
		return ""
	}
	why := "exited at once (a missing grpcio or protobuf is the usual cause)"
	if missing != "" {
		why = "lacks a module the plugin imports"
	}
	return fmt.Sprintf("; the interpreter was %s, which %s: install grpcio and protobuf for it "+
		"(pip install grpcio protobuf) or name one that has them, e.g. plugins: {%s: {command: [/usr/bin/python3, SCRIPT]}} "+
		"with Debian's python3-grpcio and python3-protobuf, or a virtualenv's bin/python", program, why, plugin)
}

// missingModule finds the module of Python's "ModuleNotFoundError: No module named 'x.y'".
var missingModule = regexp.MustCompile(`No module named '([^']+)'`)

// grpcModule reports whether a module is grpc's or protobuf's (what the SDK needs).
func grpcModule(name string) bool {
	top, _, _ := strings.Cut(name, ".")
	return top == "grpc" || top == "grpc_tools" || top == "grpc_health" || name == "google" || strings.HasPrefix(name, "google.protobuf")
}

// mentionsGRPC reports whether stderr names grpc or protobuf.
func mentionsGRPC(stderr string) bool {
	l := strings.ToLower(stderr)
	return strings.Contains(l, "grpc") || strings.Contains(l, "protobuf")
}
