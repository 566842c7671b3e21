package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ChildAttr makes a child get SIGTERM when the measuring process dies, so a killed benchmark
// stops the wend processes it started (a `wend serve` then stops its plugins).
func ChildAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }

// NoLeftovers is an error when a process still runs one of the programs (paths the measurement
// built, so no other process runs them), after a second's grace for exits in flight; it
// kills those processes.
func NoLeftovers(programs ...string) error {
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
