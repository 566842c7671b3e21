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
	serveCPUFan     = flag.Bool("servecpu-foreach", false, "servecpu: time and profile the 200-item for_each workload instead of the sequential one (no floor)")
)

// serveCPU: `wend serve`'s own CPU (utime + stime of its process, the plugin's not counted)
// per sequential plugin step. It starts serve (bench/heapserve, which is wend's command line
// with a CPU profile on request) with the 200-step workflow, warms it with one run, then for
// each round reads /proc/PID/stat around 5 runs of 200 steps one after another: 1,000 steps
// a round, so the kernel's 10 ms tick is 1 % of the figure. Each round is framed by the floor's
// CPU: the bench's own CPU for the bare durable loop a step cannot beat (a synced write into a
// preallocated file, as the log's, then the same echo call through a plugin host in the bench's
// process), half right before serve's runs and half right after; what serve spends over it is
// the engine's.
func (b *bench) serveCPU() {
	dir := b.path("servecpu")
	flows := filepath.Join(dir, "flows")
	if err := os.MkdirAll(flows, 0o755); err != nil {
		fail(err)
	}
	wend, plugin := filepath.Join(dir, "wend"), filepath.Join(dir, "demo")
	goBuild(wend, "github.com/wendflow/wend/bench/heapserve")
	goBuild(plugin, "github.com/wendflow/wend/examples/plugins/demo")
	seqBody, fanBody, _ := pluginFlows(plugin)
	workflow, input := "pseq", "null"
	if *serveCPUFan {
		workflow, input = "pfan", fanInput()
		writeWorkflow(filepath.Join(flows, "pfan.wend.yaml"), "pfan", fanBody)
	} else {
		writeWorkflow(filepath.Join(flows, "pseq.wend.yaml"), "pseq", seqBody)
	}
	var floor *cpuFloor
	if !*serveCPUFan {
		floor = b.newCPUFloor(plugin)
		atFail(floor.close)
	}

	ask, asker := io.Pipe()
	env := os.Environ()
	if *serveCPUProfile != "" {
		env = append(env, "WEND_BENCH_CPUPROFILE="+*serveCPUProfile)
		os.Remove(*serveCPUProfile) // waitFile waits for the new one
	}
	srv, check := serveFor(harness.Options{Bin: wend, DB: filepath.Join(dir, "serve.db"), Flags: []string{"--workflows", flows},
		Log: filepath.Join(dir, "serve.log"), Env: env, Stdin: ask, Workflows: 1})
	check(runToEnd(srv, "warmup", workflow, input))
	const runs, steps = 5, 200
	if *serveCPUProfile != "" {
		_, err := fmt.Fprintln(asker, "cpu")
		check(err)
	}
	var perStep, floorStep, overFloor []float64
	var took []time.Duration
	for round := range *serveCPURounds {
		var floorCPU time.Duration
		if floor != nil {
			floorCPU = floor.run(runs * steps / 2)
		}
		before, err := processCPU(srv.PID())
		check(err)
		start := time.Now()
		for i := range runs {
			check(runToEnd(srv, fmt.Sprintf("r-%d-%d", round, i), workflow, input))
		}
		took = append(took, time.Since(start))
		after, err := processCPU(srv.PID())
		check(err)
		perStep = append(perStep, float64(after-before)/float64(time.Millisecond)/(runs*steps))
		if floor != nil {
			floorCPU += floor.run(runs * steps / 2)
			fs := float64(floorCPU) / float64(time.Millisecond) / (runs * steps)
			floorStep = append(floorStep, fs)
			overFloor = append(overFloor, perStep[round]-fs)
		}
	}
	if *serveCPUProfile != "" {
		_, err := fmt.Fprintln(asker, "cpu")
		check(err)
		check(waitFile(*serveCPUProfile, time.Minute))
	}
	asker.Close() // before the stop: serve's exit waits for its standard input to end
	_, err := srv.Stop()
	check(err)
	if floor != nil {
		floor.close() // its plugin is the same program: gone before the check for leftovers
	}
	check(harness.NoLeftovers(wend, plugin))
	if *serveCPUFan {
		emit("wend_serve_cpu_foreach", "cpu_ms_per_item", round(medianOf(perStep)), "cpu_ms_per_item_each", roundAll(perStep),
			"wall_ms_per_run", round(median(took)/runs),
			"note", "wend serve's own utime+stime (/proc/PID/stat) per item of the 200-item for_each on the example Go plugin, "+
				"around 5 runs a round through the control socket; the plugin's CPU not counted; the median of the rounds")
		return
	}
	emit("wend_serve_cpu", "cpu_ms_per_step", round(medianOf(perStep)), "cpu_ms_per_step_each", roundAll(perStep),
		"floor_cpu_ms_per_step", round(medianOf(floorStep)), "over_floor_cpu_ms_per_step", round(medianOf(overFloor)),
		"over_floor_each", roundAll(overFloor), "wall_ms_per_step", round(median(took)/(runs*steps)),
		"note", "wend serve's own utime+stime (/proc/PID/stat) per step of the 200-step sequential workflow on the example Go plugin, "+
			"around 5 runs a round through the control socket; the plugin's CPU not counted; the median of the rounds. "+
			"floor: the bench's own CPU a round of the bare durable loop (a synced write into a preallocated file, then the same echo "+
			"through a plugin host in the bench), half before and half after serve's runs; over_floor: serve's minus the floor's, a round")
}

// cpuFloor is the bare durable loop a sequential step cannot beat, priced in CPU: a synced
// 512-byte write into a file preallocated as the log's segments are, then an echo call to the
// plugin through a host in the bench's process. The bench does nothing else meanwhile, so its
// own CPU (getrusage) around the loop is the loop's.
type cpuFloor struct {
	b    *bench
	host *hostActs
}

func (b *bench) newCPUFloor(plugin string) *cpuFloor {
	f := &cpuFloor{b: b, host: &hostActs{bin: plugin}}
	f.host.echo() // start the plugin before anything is timed
	return f
}

// run runs n iterations of the loop and returns the CPU they took.
func (f *cpuFloor) run(n int) time.Duration {
	var app, calls time.Duration
	before := cpuTime()
	f.b.appendLoop(n, f.host.echo, true, &app, &calls)
	return cpuTime() - before
}

func (f *cpuFloor) close() { f.host.close() }

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
