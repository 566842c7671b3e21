package spec

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Builtins are the plugins the wend binary serves itself, declared `plugins: {web: {builtin:
// http}}`. plugins/builtin implements them; a test keeps the two lists equal.
var Builtins = []string{"exec", "http"}

// BuiltinCommandPrefix starts the command of a builtin plugin's declaration: the plugin host
// (plugins.Config) starts the wend binary serving the builtin named after it.
const BuiltinCommandPrefix = "wend:builtin:"

func (d *decoder) builtin(n *yaml.Node, path string) string {
	name := str(n)
	if slices.Contains(Builtins, name) {
		return name
	}
	msg := fmt.Sprintf("unknown builtin plugin %q", name)
	if s := suggest(name, Builtins); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	d.errorf(n, path, "%s; the builtins are %s", msg, strings.Join(Builtins, ", "))
	return ""
}
