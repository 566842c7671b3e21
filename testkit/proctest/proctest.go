// Package proctest is a helper of wend's own tests, not an API: it reads Linux's /proc for
// tests that count processes (a plugin's process group after a kill, zombies left unreaped)
// and the example plugin's invocation log. Tests of both modules import it; no product
// package may.
package proctest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat is what the tests need of /proc/PID/stat.
type Stat struct {
	State string // R, S, T, Z, X...
	PPID  int
	PGRP  int
}

// Read parses /proc/PID/stat; false when pid does not exist.
func Read(pid int) (Stat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the
	// last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return Stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return Stat{State: f[0], PPID: ppid, PGRP: pgrp}, true
}

// State is pid's state letter, "" when pid does not exist.
func State(pid int) string {
	st, _ := Read(pid)
	return st.State
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	st, ok := Read(pid)
	return ok && st.State != "Z" && st.State != "X"
}

// Group lists the live (non-zombie) members of process group pgid.
func Group(pgid int) []int {
	var pids []int
	for _, pid := range all() {
		if st, ok := Read(pid); ok && st.PGRP == pgid && st.State != "Z" && st.State != "X" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ZombieChildren counts the children of ppid that died and were never reaped.
func ZombieChildren(ppid int) int {
	n := 0
	for _, pid := range all() {
		if st, ok := Read(pid); ok && st.PPID == ppid && st.State == "Z" {
			n++
		}
	}
	return n
}

func all() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
