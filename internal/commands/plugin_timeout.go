package commands

import (
	"fmt"
	"io"
	"time"
)

// startTimeoutEnv names the variable that changes how long a plugin gets to start (handshake
// and first health check) in every command that starts plugins. Default: plugins.Options'.
const startTimeoutEnv = "WEND_PLUGIN_START_TIMEOUT"

// pluginStartTimeout reads startTimeoutEnv; unset gives 0 (the host's default, 30s). A value
// that is not a positive duration is reported on stderr and ignored.
func pluginStartTimeout(e *env) time.Duration {
	return startTimeout(e.getenv, e.stderr)
}

// PluginStartTimeout is pluginStartTimeout for commands an extension adds (`wend worker`
// starts plugins too, and reads the same variable).
func PluginStartTimeout(sys IO) time.Duration {
	return startTimeout(sys.Getenv, sys.Stderr)
}

func startTimeout(getenv func(string) string, stderr io.Writer) time.Duration {
	if getenv == nil {
		return 0
	}
	v := getenv(startTimeoutEnv)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(stderr, "wend: %s=%q is not a positive duration such as 2m; using the default 30s\n", startTimeoutEnv, v)
		return 0
	}
	return d
}
