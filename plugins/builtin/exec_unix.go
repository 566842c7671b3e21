//go:build unix

package builtin

import (
	"fmt"
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

// startGroup starts cmd as the leader of a process group of its own, carrying a fresh token,
// and records the group in records (durably) before its output is read; a cancel kills the
// whole group. A group that cannot be recorded is killed: it never runs unrecorded.
func startGroup(cmd *exec.Cmd, records *cmdgroup.Dir, key string) (*group, error) {
	token := cmdgroup.NewToken()
	cmd.Env = append(cmd.Env, cmdgroup.TokenEnv+"="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	// Called before Wait has reaped the leader, whose group id therefore names this group.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rec, err := records.Track(key, token, cmd.Process.Pid)
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, fmt.Errorf("killed: its process group could not be recorded: %w", err)
	}
	return &group{rec: rec}, nil
}

// end kills what is left of the group once the leader has been waited for, and drops its record.
func (g *group) end() error { return g.rec.End() }
