package worker

import (
	"testing"
	"time"
)

// TestPluginOptionsCarryStartTimeout: a worker's plugins get the start timeout it was given
// (WEND_PLUGIN_START_TIMEOUT in `wend worker`), not always the host's default.
func TestPluginOptionsCarryStartTimeout(t *testing.T) {
	for _, d := range []time.Duration{0, 30 * time.Second} {
		got := pluginOptions(Options{PluginStartTimeout: d}, "/state/worker.plugins")
		if got.StartTimeout != d || got.Registry != "/state/worker.plugins" || got.Log == nil {
			t.Errorf("PluginStartTimeout %v: plugin options %+v", d, got)
		}
	}
}
