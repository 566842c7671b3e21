package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wendflow/wend/plugins"
)

// pluginRegistry is where the plugin processes started for database db are recorded, so the
// next wend to open db can kill those a killed wend left running (docs/reliability.md P8).
func pluginRegistry(db string) string { return db + ".plugins" }

// reapPlugins kills the leftover plugin processes of a dead wend recorded in registry and
// says so. Problems with the registry are warnings: they must not stop runs from resuming.
func reapPlugins(e *env, registry string) {
	rep, err := plugins.Reap(registry)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend: warning: %v\n", err)
	}
	if rep.Corrupt > 0 {
		fmt.Fprintf(e.stderr, "wend: warning: dropped %d unreadable line(s) of plugin registry %s; processes they named were not reaped\n", rep.Corrupt, registry)
	}
	if rep.CorruptCommands > 0 {
		fmt.Fprintf(e.stderr, "wend: warning: dropped %d unreadable command record(s) beside %s; the commands they named were not killed\n", rep.CorruptCommands, registry)
	}
	if rep.Commands > 0 {
		fmt.Fprintf(e.stderr, "wend: killed %d command group(s) left by a previous wend\n", rep.Commands)
	}
	if len(rep.Reaped) == 0 {
		return
	}
	var hosts []string
	for _, r := range rep.Reaped {
		if h := strconv.Itoa(r.HostPID); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	fmt.Fprintf(e.stderr, "wend: reaped %d plugin process(es) left by a previous wend (pid %s)\n", len(rep.Reaped), strings.Join(hosts, ", "))
}
