package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/wendflow/wend/bench/harness"
)

// Temporal's dev server on the three workloads, in ms: 200 sequential activities, 200 in one
// parallel step, 100 runs of 3 activities started together. wend aims at a tenth of each.
const (
	temporalSeqMs   = 1390
	temporalFanMs   = 530
	temporalThreeMs = 2380
)

// temporalNote says what the temporal_ratio figures divide by, and where the side-by-side
// figure is.
const temporalNote = "temporal_ratio is wend over a constant, Temporal's dev server measured once on this machine " +
	"(1,390 / 530 / 2,380 ms), not side by side. The side-by-side figure for these workloads through a real wend serve " +
	"(the example plugin, and an in-process no-op; with and without the store's log) against plain Temporal on a tuned dev " +
	"server, in interleaved rounds, is temporal/e2e/cmd/yardstick's " +
	"(cd temporal/e2e && GOTOOLCHAIN=go1.26.11 go run ./cmd/yardstick -rounds 7; docs/performance.md, Temporal)"

const processRepeats = 3

// process: the three workloads through real processes. It builds the wend binary and the
// example Go plugin, starts `wend serve` on a fresh database with the workflows registered,
// warms it up with one 3-step run (so the plugin process is running, as in a long-running
// server), and times each workload over the control socket from the first POST /v1/runs to
// the last GET /v1/runs/{id}/wait answer. Separately it times the cold CLI path: `wend run`
// of the 200-step workflow, exec to exit, on a fresh database each time. Every figure is the
// median of processRepeats.
func (b *bench) process() {
	dir := b.path("process")
	flows := filepath.Join(dir, "flows")
	if err := os.MkdirAll(flows, 0o755); err != nil {
		fail(err)
	}
	wend, plugin := filepath.Join(dir, "wend"), filepath.Join(dir, "demo")
	goBuild(wend, "github.com/wendflow/wend/cmd/wend")
	goBuild(plugin, "github.com/wendflow/wend/examples/plugins/demo")
	seqBody, fanBody, threeBody := pluginFlows(plugin)
	seqFile := writeWorkflow(filepath.Join(flows, "pseq.wend.yaml"), "pseq", seqBody)
	writeWorkflow(filepath.Join(flows, "pfan.wend.yaml"), "pfan", fanBody)
	writeWorkflow(filepath.Join(flows, "pthree.wend.yaml"), "pthree", threeBody)

	floor := b.sequentialFloor(plugin)
	atFail(floor.close)
	srv := startServe(wend, filepath.Join(dir, "serve.db"), flows, filepath.Join(dir, "serve.log"))
	atFail(srv.Kill)
	check := func(err error) {
		if err != nil {
			fail(fmt.Errorf("%v\n%s", err, srv.Tail()))
		}
	}
	check(runToEnd(srv, "warmup", "pthree", "null"))
	var seqT, fanT, threeT, floorT []time.Duration
	var overFloor []float64
	for rep := range processRepeats {
		// The floor is interleaved with the run it prices: half its rounds right before the
		// served run, half right after, so a loaded moment weighs on both alike.
		fl := floor.run(100)
		start := time.Now()
		check(runToEnd(srv, fmt.Sprintf("seq-%d", rep), "pseq", "null"))
		seqT = append(seqT, time.Since(start))
		fl += floor.run(100)
		floorT = append(floorT, fl)
		overFloor = append(overFloor, float64(seqT[rep])/float64(fl))

		start = time.Now()
		check(runToEnd(srv, fmt.Sprintf("fan-%d", rep), "pfan", fanInput()))
		fanT = append(fanT, time.Since(start))

		start = time.Now()
		errs := make([]error, 100)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = runToEnd(srv, fmt.Sprintf("three-%d-%d", rep, i), "pthree", "null") }()
		}
		wg.Wait()
		threeT = append(threeT, time.Since(start))
		check(errors.Join(errs...))
	}
	floor.close()
	stopT, err := srv.Stop()
	check(err)
	check(harness.NoLeftovers(wend, plugin))

	var cliT []time.Duration
	for rep := range processRepeats {
		d, err := cliRun(wend, seqFile, filepath.Join(dir, fmt.Sprintf("cli-%d.db", rep)), filepath.Join(dir, fmt.Sprintf("cli-%d.log", rep)))
		if err != nil {
			fail(err)
		}
		cliT = append(cliT, d)
	}
	if err := harness.NoLeftovers(wend, plugin); err != nil {
		fail(err)
	}

	seqMs, fanMs, threeMs := median(seqT), median(fanT), median(threeT)
	emit("wend_process_workloads",
		"sequential_200_ms", seqMs, "sequential_200_ms_range", span(seqT),
		"parallel_200_ms", fanMs, "parallel_200_ms_range", span(fanT),
		"runs_100x3_ms", threeMs, "runs_100x3_ms_range", span(threeT),
		"cli_run_sequential_200_ms", median(cliT), "cli_run_sequential_200_ms_range", span(cliT),
		"sequential_200_updates_per_step", round(seqMs/200/b.updateMs),
		"sequential_200_floor_ms", median(floorT), "sequential_200_floor_ms_range", span(floorT),
		"sequential_200_over_floor", round(medianOf(overFloor)), "sequential_200_over_floor_each", roundAll(overFloor),
		"temporal_ratio_sequential_200", round(seqMs/temporalSeqMs),
		"temporal_ratio_parallel_200", round(fanMs/temporalFanMs),
		"temporal_ratio_runs_100x3", round(threeMs/temporalThreeMs),
		"serve_ready_ms", ms(srv.Ready), "serve_stop_ms", ms(stopT), "repeats", processRepeats,
		"note", "wend serve + example Go plugin, plugin started; POST /v1/runs + GET /v1/runs/{id}/wait over the control socket; "+
			"cli_run is `wend run` exec to exit on a fresh db; ms are medians, ranges min and max; updates_per_step is against this run's "+
			"bbolt_update; sequential_200_floor is 200 rounds of the bare durable loop (a plain synced "+
			"Update, then the same call through a plugin host in the bench), no engine, 100 right before each served sequential run and 100 right after; "+
			"sequential_200_over_floor is the median of the repeats' run/floor; "+temporalNote)
}

// floorLoop is the bare durable loop on the example plugin: a plain synced Update, then one
// echo call through a host in this process. No engine that makes each step durable before it
// calls the plugin can run n sequential steps in less than run(n) on this machine; half of it
// is timed right before each served sequential run and half right after, as disk speed here
// drifts within a minute.
type floorLoop struct {
	b    *bench
	host *hostActs
}

func (b *bench) sequentialFloor(bin string) *floorLoop {
	f := &floorLoop{b: b, host: &hostActs{bin: bin}}
	f.host.echo() // start the plugin, as the served workloads have it started
	return f
}

func (f *floorLoop) run(n int) time.Duration {
	var upd, calls time.Duration
	f.b.bareLoop(n, f.host.echo, &upd, &calls)
	return upd + calls
}

func (f *floorLoop) close() { f.host.close() }

func goBuild(out, pkg string) {
	if o, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		fail(fmt.Errorf("go build %s: %v\n%s", pkg, err, o))
	}
}

// startServe starts `wend serve` on db with the workflows below flows registered and no TCP
// listener, and returns once the socket answers /v1/health and lists the three workflows;
// its Ready is exec to ready.
func startServe(wend, db, flows, logPath string) *harness.Serve {
	s, err := harness.Start(harness.Options{Bin: wend, DB: db, Flags: []string{"--workflows", flows}, Log: logPath, Workflows: 3})
	if err != nil {
		fail(err)
	}
	return s
}

// serveFor starts o's serve and closes this process's end of each ask's pipe (heapServe,
// cpuServe), so the bench fails, killing serve, if it does not start. check fails the bench on
// an error, with the tail of serve's log, after killing serve.
func serveFor(o harness.Options, asks ...*heapAsk) (srv *harness.Serve, check func(error)) {
	srv, err := harness.Start(o)
	for _, a := range asks {
		if a != nil {
			a.started()
		}
	}
	if err != nil {
		fail(err)
	}
	atFail(srv.Kill)
	return srv, func(err error) {
		if err != nil {
			srv.Kill()
			fail(fmt.Errorf("%v\n%s", err, srv.Tail()))
		}
	}
}

// runToEnd starts a run of the registered workflow under id and waits until it has closed;
// an error unless it completed.
func runToEnd(s *harness.Serve, id, workflow, input string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return s.Run(ctx, id, workflow, json.RawMessage(input))
}

// cliRun times `wend run FILE --db DB` from exec to exit and checks that it exited 0.
func cliRun(wend, file, db, logPath string) (time.Duration, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, wend, "run", file, "--db", db, "--id", "cli")
	cmd.Stdout, cmd.Stderr = &out, logf
	cmd.SysProcAttr = harness.ChildAttr()
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("wend run %s: %v\n%s", file, err, harness.Tail(logPath))
	}
	if !json.Valid(out.Bytes()) {
		return 0, fmt.Errorf("wend run %s: stdout is not JSON: %q", file, out.String())
	}
	return took, nil
}

func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return ms((s[n/2-1] + s[n/2]) / 2)
	}
	return ms(s[len(s)/2])
}

func span(ds []time.Duration) [2]float64 {
	return [2]float64{ms(slices.Min(ds)), ms(slices.Max(ds))}
}
