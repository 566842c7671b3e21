//go:build unix

package builtin

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/wendflow/wend/plugins/cmdgroup"
)

var platformEnv []string

func shellArgv(argv []string) []string {
	return append([]string{"/bin/sh", "-c", argv[0], "sh"}, argv[1:]...)
}

// shellLine has nothing to add: sh gets its script and arguments as separate words.
func shellLine(*exec.Cmd, []string) {}

// group is a started command's process group and its record.
type group struct{ rec *cmdgroup.Record }

// gateScript holds a command until its group is recorded: sh, the group's leader, reads a line
// from fd 3, which startGroup writes only once the record is durable, then closes it and execs
// the command (same pid, so the record names the command's group). At end of file (the plugin
// died before recording) it exits without running anything: no command runs unrecorded.
const gateScript = `IFS= read -r wend_gate <&3 || exit 125; exec 3<&-; exec "$@"`

// startGroup starts cmd as the leader of a process group of its own, carrying a fresh token,
// held at a gate until the group is recorded in records (durably); a cancel kills the whole
// group. A group that cannot be recorded is killed before its command runs.
func startGroup(cmd *exec.Cmd, records *cmdgroup.Dir, key string) (*group, error) {
	token := cmdgroup.NewToken()
	cmd.Env = append(cmd.Env, cmdgroup.TokenEnv+"="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	// Called before Wait has reaped the leader, whose group id therefore names this group.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if cmd.Err != nil { // not found: Start reports it, as without a gate
		return nil, cmd.Start()
	}
	gate, open, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer open.Close() // an unopened gate is an end of file: sh exits, the command never runs
	cmd.Args = append([]string{"/bin/sh", "-c", gateScript, "wend-gate", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	cmd.ExtraFiles = []*os.File{gate} // fd 3
	err = cmd.Start()
	gate.Close()
	if err != nil {
		return nil, err
	}
	rec, err := records.Track(key, token, cmd.Process.Pid)
	if err == nil {
		_, err = open.Write([]byte("\n"))
	}
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if rec != nil {
			_ = rec.End()
		}
		return nil, fmt.Errorf("killed: its process group could not be recorded: %w", err)
	}
	return &group{rec: rec}, nil
}

// end kills what is left of the group once the leader has been waited for, and drops its record.
func (g *group) end() error { return g.rec.End() }
