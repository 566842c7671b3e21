package builtin

import (
	"fmt"
	"os"
	"slices"
	"strings"

	sdk "github.com/wendflow/wend/sdk/go"
	"github.com/wendflow/wend/sdk/go/wire"
)

// BuiltinEnv names the variable that tells a wend binary started as a plugin which builtin to
// serve. The host sets it (plugins.Config with a builtin command) next to go-plugin's cookie.
const BuiltinEnv = "WEND_BUILTIN_PLUGIN"

// builtins maps each builtin's name to its activities.
var builtins = map[string]func() sdk.Activities{
	"exec": execActivities,
	"http": httpActivities,
}

// Names lists the builtins, sorted.
func Names() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Activities returns the activities of the builtin name, or nil when there is none.
func Activities(name string) sdk.Activities {
	if f, ok := builtins[name]; ok {
		return f()
	}
	return nil
}

// Requested returns the builtin this process was started to serve, or "" when it was started
// as a command.
func Requested() string {
	// go-plugin's cookie too: the variable alone does not turn a wend command into a plugin.
	if os.Getenv(wire.Handshake.MagicCookieKey) != wire.Handshake.MagicCookieValue {
		return ""
	}
	return os.Getenv(BuiltinEnv)
}

// Serve serves the builtin name and returns the process's exit code: 1 when there is no such
// builtin or serving fails to start.
func Serve(name string) int {
	acts := Activities(name)
	if acts == nil {
		fmt.Fprintf(os.Stderr, "wend: no builtin plugin %q (have %s)\n", name, strings.Join(Names(), ", "))
		return 1
	}
	sdk.Serve(acts)
	return 1
}
