//go:build linux && !wend_portable

package cmdgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// On Linux a record's start time is /proc/PID/stat's starttime (clock ticks since boot). A
// live leader whose start time matches the record makes the whole group its own; with the
// leader gone (a parent-death signal killed the shell, a shell that exited), a member is
// counted as the group's only if its environment carries the record's token. Every kill of a
// single process goes through a pidfd, which pins the process that was checked.

// proc is one process as /proc/PID/stat shows it.
type proc struct {
	pid, pgid int
	start     uint64
	state     string
}

func readStat(pid int) (proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, err
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the
	// last ')'; state is then at index 0, pgrp at 2, starttime (field 22) at 19.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return proc{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	pgid, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return proc{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return proc{pid: pid, pgid: pgid, start: start, state: f[0]}, nil
}

func (p proc) live() bool { return p.state != "Z" && p.state != "X" }

func procStart(pid int) (uint64, error) {
	p, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return p.start, nil
}

// group lists the live processes whose process group is pgid.
func group(pgid int) []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := readStat(pid); err == nil && p.pgid == pgid && p.live() {
			out = append(out, p)
		}
	}
	return out
}

// ours reports whether p belongs to r's group: its leader as recorded, or a member carrying
// r's token.
func ours(r *Record, p proc) bool {
	if p.pgid != r.PGID || !p.live() {
		return false
	}
	if p.pid == r.PGID {
		return p.start == r.Start
	}
	return r.Token != "" && carries(p.pid, []byte(TokenEnv+"="+r.Token))
}

// signalGroup SIGKILLs the processes of r's group and returns how many it found. A live
// leader with another start time means the id names a stranger's group: nothing is signalled.
func signalGroup(r *Record) (int, error) {
	procs := group(r.PGID)
	for _, p := range procs {
		if p.pid == r.PGID {
			if p.start != r.Start {
				return 0, nil
			}
			killLed(r)
			return len(procs), nil
		}
	}
	n := 0
	for _, p := range procs {
		if kill1(r, p.pid) {
			n++
		}
	}
	return n, nil
}

// killLed kills a group whose recorded leader lives: the leader through a pidfd once checked
// again, then the whole group, whose id the unreaped leader keeps from reuse.
func killLed(r *Record) {
	if kill1(r, r.PGID) {
		_ = unix.Kill(-r.PGID, unix.SIGKILL)
	}
}

// kill1 SIGKILLs pid if, pinned by a pidfd, it is still r's; it reports whether it did.
func kill1(r *Record, pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false // gone meanwhile (or a kernel before 5.3: only a pinned process is signalled)
	}
	defer unix.Close(fd)
	cur, err := readStat(pid)
	return err == nil && ours(r, cur) && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

// carries reports whether pid's environment holds the exact entry kv.
func carries(pid int, kv []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, v := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(v, kv) {
			return true
		}
	}
	return false
}
