package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// childAttr makes a child get SIGTERM when the bench dies, so a killed bench stops the wend
// processes it started (a `wend serve` then stops its plugin).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }

// noLeftovers is an error when a process still runs one of the programs (paths the bench
// built, so no other process runs them), after a second's grace for exits in flight; it
// kills those processes.
func noLeftovers(programs ...string) error {
	var pids []int
	for range 20 {
		pids = running(programs)
		if len(pids) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return fmt.Errorf("processes left running (now killed): %v", pids)
}

func running(programs []string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	var pids []int
	for _, p := range procs {
		exe, err := os.Readlink(p)
		if err != nil {
			continue // gone, a zombie, or not ours
		}
		for _, prog := range programs {
			if exe == prog {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
