package commands

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wendflow/wend/plugins"
)

// reportReap says what app.Open found of a dead wend's plugin processes recorded in registry
// (app.PluginRegistry; docs/reliability.md P8) and killed. Problems with the registry are
// warnings: they must not stop runs from resuming.
func reportReap(e *env, registry string, rep plugins.ReapReport, err error) {
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
