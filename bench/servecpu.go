package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/bench/harness"
)

var (
	serveCPURounds  = flag.Int("servecpu-rounds", 5, "servecpu: rounds of 5 sequential 200-step runs, serve's CPU read around each")
	serveCPUProfile = flag.String("servecpu-profile", "", "servecpu: write serve's CPU profile over the rounds to FILE (that serve is bench/heapserve)")
)

// serveCPU: `wend serve`'s own CPU (utime + stime of its process, the plugin's not counted)
// per sequential plugin step. It starts serve (bench/heapserve, which is wend's command line
// with a CPU profile on request) with the 200-step workflow, warms it with one run, then for
// each round reads /proc/PID/stat around 5 runs of 200 steps one after another: 1,000 steps
// a round, so the kernel's 10 ms tick is 1 % of the figure.
func (b *bench) serveCPU() {
	dir := b.path("servecpu")
	flows := filepath.Join(dir, "flows")
	if err := os.MkdirAll(flows, 0o755); err != nil {
		fail(err)
	}
	wend, plugin := filepath.Join(dir, "wend"), filepath.Join(dir, "demo")
	goBuild(wend, "github.com/wendflow/wend/bench/heapserve")
	goBuild(plugin, "github.com/wendflow/wend/examples/plugins/demo")
	seqBody, _, _ := pluginFlows(plugin)
	writeWorkflow(filepath.Join(flows, "pseq.wend.yaml"), "pseq", seqBody)

	ask, asker := io.Pipe()
	env := os.Environ()
	if *serveCPUProfile != "" {
		env = append(env, "WEND_BENCH_CPUPROFILE="+*serveCPUProfile)
		os.Remove(*serveCPUProfile) // waitFile waits for the new one
	}
	srv, err := harness.Start(harness.Options{Bin: wend, DB: filepath.Join(dir, "serve.db"), Flags: []string{"--workflows", flows},
		Log: filepath.Join(dir, "serve.log"), Env: env, Stdin: ask, Workflows: 1})
	if err != nil {
		fail(err)
	}
	atFail(srv.Kill)
	check := func(err error) {
		if err != nil {
			fail(fmt.Errorf("%v\n%s", err, srv.Tail()))
		}
	}
	check(runToEnd(srv, "warmup", "pseq", "null"))
	const runs, steps = 5, 200
	if *serveCPUProfile != "" {
		_, err := fmt.Fprintln(asker, "cpu")
		check(err)
	}
	var perStep []float64
	var took []time.Duration
	for round := range *serveCPURounds {
		before, err := processCPU(srv.PID())
		check(err)
		start := time.Now()
		for i := range runs {
			check(runToEnd(srv, fmt.Sprintf("seq-%d-%d", round, i), "pseq", "null"))
		}
		took = append(took, time.Since(start))
		after, err := processCPU(srv.PID())
		check(err)
		perStep = append(perStep, float64(after-before)/float64(time.Millisecond)/(runs*steps))
	}
	if *serveCPUProfile != "" {
		_, err := fmt.Fprintln(asker, "cpu")
		check(err)
		check(waitFile(*serveCPUProfile, time.Minute))
	}
	asker.Close() // before the stop: serve's exit waits for its standard input to end
	_, err = srv.Stop()
	check(err)
	check(harness.NoLeftovers(wend, plugin))
	emit("wend_serve_cpu", "cpu_ms_per_step", round(medianOf(perStep)), "cpu_ms_per_step_each", roundAll(perStep),
		"wall_ms_per_step", round(median(took)/(runs*steps)),
		"note", "wend serve's own utime+stime (/proc/PID/stat) per step of the 200-step sequential workflow on the example Go plugin, "+
			"around 5 runs a round through the control socket; the plugin's CPU not counted; the median of the rounds")
}

// processCPU is a process's user plus system CPU so far, from /proc/PID/stat (Linux).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("serve's CPU: %w (servecpu needs Linux's /proc)", err)
	}
	// The fields after the command's ")": state is the 3rd of the line, utime the 14th, stime the 15th.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("serve's CPU: /proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("serve's CPU: /proc/%d/stat: %q", pid, b)
	}
	const tick = 10 * time.Millisecond // USER_HZ, 100 on Linux
	return time.Duration(utime+stime) * tick, nil
}

// waitFile waits until path exists.
func waitFile(path string, within time.Duration) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s not written within %v", path, within)
}
