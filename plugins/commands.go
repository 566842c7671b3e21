package plugins

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wendflow/wend/plugins/cmdgroup"
)

// The exec builtin records each command's process group in a folder beside the registry
// (plugins/cmdgroup). The host kills what a plugin's commands left when the plugin ends,
// however it ends, and Reap kills what a killed wend's left before anything runs again.

// commandsDir is the records folder of the registry file: wend.db.plugins -> wend.db.commands.
func commandsDir(registry string) string {
	return strings.TrimSuffix(registry, ".plugins") + ".commands"
}

// reapCommands kills what the commands of the ended plugin process left and drops their
// records; the runner calls it once the process has exited.
func (r *procRunner) reapCommands() {
	if r.reg == nil || r.group == "" {
		return
	}
	rep, err := cmdgroup.At(commandsDir(r.reg.path)).ReapOwner(r.group)
	if err != nil && r.log != nil {
		r.log(r.name, fmt.Sprintf("wend: command records %s: %v", commandsDir(r.reg.path), err))
	}
	if rep.Killed > 0 && r.log != nil {
		r.log(r.name, fmt.Sprintf("wend: killed %d command group(s) the ended plugin left", rep.Killed))
	}
}

// reapAllCommands kills what every record beside registry names; Reap calls it once no
// plugin of a previous wend runs.
func reapAllCommands(registry string, rep *ReapReport) error {
	if registry == "" {
		return nil
	}
	dir := commandsDir(registry)
	c, err := cmdgroup.At(dir).ReapAll()
	rep.Commands, rep.CorruptCommands = c.Killed, c.Corrupt
	if err != nil {
		return fmt.Errorf("reap commands: %s: %w (it records the commands of a killed wend)", dir, err)
	}
	return nil
}

// Reap kills what a killed wend left running for the registry at path: first its plugin
// processes (see the registry), then what their commands left (every record beside it). Call
// it only while owning the registry (the CLI: holding the database lock).
func Reap(path string) (ReapReport, error) {
	rep, err := reapPlugins(path)
	return rep, errors.Join(err, reapAllCommands(path, &rep))
}
