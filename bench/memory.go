package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/wendflow/wend/bench/harness"
)

var memoryScale = flag.Float64("memory-scale", 1, "memory: multiply each case's number of runs by this (a quick look at a smaller size)")

// memory prints the peak resident set of each burst of docs/performance.md's memory targets,
// each case in a process of its own (this bench, re-executed), so that no case's peak is
// another's: the peak is the operating system's account of that process (its rusage's
// maxrss, which counts from exec, not the fork). The cases are idle's parts on an engine in
// process over a synced store, as `wend serve` drives it (idle.go):
//
//   - 100,000 runs started at once (32 starters), each waiting on a signal and a 72 h timer:
//     all still resident (no IdleAfter, no MaxResidentRuns: what the runs' state costs); and
//     on an engine that lets runs leave memory as `wend serve`'s does by default (IdleAfter
//     5 min, so engine.DefaultMaxResidentRuns);
//   - 100,000 runs whose timers all fall due in the same second, fired to the last run
//     closed, with MaxResidentRuns 1,000 (idle's timers part);
//   - 20,000 runs waiting live, all in memory, and as serve holds them.
//
// Each case's own figures (its JSON line) are printed as they come, then one line with the peaks.
func (b *bench) memory() {
	exe, err := os.Executable()
	if err != nil {
		fail(err)
	}
	scaled := func(n int) string { return strconv.Itoa(max(1000, int(float64(n)**memoryScale))) }
	cases := []struct {
		key  string
		args []string
	}{
		{"resident_100000_peak_rss_mb", []string{"-idle-n", scaled(100_000), "-idle-resident-only"}},
		{"started_100000_as_serve_peak_rss_mb", []string{"-idle-n", scaled(100_000), "-idle-resident-only", "-idle-as-serve"}},
		{"timers_100000_same_second_peak_rss_mb", []string{"-idle-n", scaled(100_000), "-idle-timers-only"}},
		{"waiting_20000_peak_rss_mb", []string{"-idle-n", scaled(20_000), "-idle-resident-only"}},
		{"waiting_20000_as_serve_peak_rss_mb", []string{"-idle-n", scaled(20_000), "-idle-resident-only", "-idle-as-serve"}},
	}
	kv := []any{"scale", *memoryScale}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		cmd := exec.Command(exe, append([]string{"-only", "idle"}, c.args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.SysProcAttr = harness.ChildAttr()
		if err := cmd.Run(); err != nil {
			fail(fmt.Errorf("memory: %s %s: %v\n%s", exe, strings.Join(c.args, " "), err, errOut.Bytes()))
		}
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), `"bbolt_update"`) {
				fmt.Println(sc.Text())
			}
		}
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		peak := -1.0
		if ru != nil {
			peak = round(float64(ru.Maxrss) / 1024) // kB on Linux
		}
		kv = append(kv, c.key, peak)
	}
	emit("memory_peaks", append(kv, "note", "the peak RSS (MB) of each case, each in a bench process of its own (rusage maxrss): "+
		"runs started at once, all resident, and on an engine that lets them leave memory as serve's does by default (as_serve); "+
		"timers due in the same second fired to the last run closed; runs waiting live, all resident and as serve")...)
}
