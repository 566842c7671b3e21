//go:build (unix && !linux) || (linux && wend_portable)

package cmdgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Off Linux (and on Linux under the wend_portable tag, which runs this path in CI) processes
// are read through ps(1), whose pid, pgid, stat and lstart columns macOS, the BSDs and procps
// share; a record's start time is lstart in Unix seconds. A live leader whose start time
// matches makes the whole group the record's; a live leader with another start time means the
// id names another group, and nothing is signalled. With the leader gone, the group is
// counted as the record's when its members started no earlier than the leader: weaker than
// Linux's token check, it would take a group whose id was reused by a leader that has since
// exited too. A pid reused within the same second as the leader's start would pass for it.

// proc is one process as ps shows it.
type proc struct {
	pid, pgid int
	start     uint64
	state     string
}

func (p proc) live() bool { return p.state != "" && p.state[0] != 'Z' }

// psPath is ps(1), looked for where every supported system keeps it, not on the plugin's PATH.
func psPath() (string, error) {
	for _, p := range []string{"/bin/ps", "/usr/bin/ps"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no ps in /bin or /usr/bin: process groups cannot be checked")
}

// ps lists processes (all with pid 0, else the one pid).
func ps(pid int) ([]proc, error) {
	path, err := psPath()
	if err != nil {
		return nil, err
	}
	args := []string{"-A"}
	if pid > 0 {
		args = []string{"-p", strconv.Itoa(pid)}
	}
	cmd := exec.Command(path, append(args, "-o", "pid=,pgid=,stat=,lstart=")...)
	cmd.Env = []string{"LC_ALL=C", "TZ=UTC0"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && (pid == 0 || len(out) > 0 || stderr.Len() > 0) {
		return nil, fmt.Errorf("ps: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	return parsePS(out)
}

// parsePS reads ps lines "PID PGID STAT Www Mmm DD HH:MM:SS YYYY".
func parsePS(out []byte) ([]proc, error) {
	var procs []proc
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 8 {
			return nil, fmt.Errorf("ps: unexpected line %q", sc.Text())
		}
		pid, err1 := strconv.Atoi(f[0])
		pgid, err2 := strconv.Atoi(f[1])
		t, err3 := time.Parse("Mon Jan 2 15:04:05 2006", strings.Join(f[3:], " "))
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("ps: line %q: %w", sc.Text(), err)
		}
		procs = append(procs, proc{pid: pid, pgid: pgid, start: uint64(t.Unix()), state: f[2]})
	}
	return procs, sc.Err()
}

func procStart(pid int) (uint64, error) {
	procs, err := ps(pid)
	if err != nil {
		return 0, err
	}
	for _, p := range procs {
		if p.pid == pid { // a zombie too: an unreaped leader keeps its pid and group
			return p.start, nil
		}
	}
	return 0, fmt.Errorf("process %d is gone", pid)
}

// signalGroup SIGKILLs r's group if what is left of it is r's, and returns how many live
// members it had. While a member lives, the group's id cannot be reused.
func signalGroup(r *Record) (int, error) {
	procs, err := ps(0)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range procs {
		if p.pgid != r.PGID || !p.live() {
			continue
		}
		if p.pid == r.PGID && p.start != r.Start || p.start < r.Start {
			return 0, nil // the id names another group now
		}
		n++
	}
	if n > 0 {
		_ = syscall.Kill(-r.PGID, syscall.SIGKILL)
	}
	return n, nil
}
