package cli

import (
	"fmt"

	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/server/metrics"
)

// pluginStats reads a router's process counts for /metrics.
func pluginStats(r *plugins.Router) func() metrics.PluginStats {
	return func() metrics.PluginStats {
		st := r.Stats()
		return metrics.PluginStats{Processes: st.Processes, Starts: st.Starts, Restarts: st.Restarts}
	}
}

// newRouter makes the plugin router of a process that drives runs: plugin stderr lines go
// to the command's stderr as "plugin NAME: LINE", processes are recorded in registry.
func newRouter(e *env, registry string) *plugins.Router {
	return plugins.NewRouter(plugins.Options{Registry: registry, StartTimeout: pluginStartTimeout(e),
		Log: func(plugin, line string) { fmt.Fprintf(e.stderr, "plugin %s: %s\n", plugin, line) }})
}
