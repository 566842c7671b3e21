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
	"syscall"
	"time"

	"github.com/wendflow/wend/internal/apiclient"
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
	goBuild(plugin, "github.com/wendflow/wend/examples/plugins/go")
	seqBody, fanBody, threeBody := pluginFlows(plugin)
	seqFile := writeWorkflow(filepath.Join(flows, "pseq.wend.yaml"), "pseq", seqBody)
	writeWorkflow(filepath.Join(flows, "pfan.wend.yaml"), "pfan", fanBody)
	writeWorkflow(filepath.Join(flows, "pthree.wend.yaml"), "pthree", threeBody)

	floor := b.sequentialFloor(plugin)
	atFail(floor.close)
	srv, readyT := startServe(wend, filepath.Join(dir, "serve.db"), flows, filepath.Join(dir, "serve.log"))
	atFail(srv.kill)
	check := func(err error) {
		if err != nil {
			fail(fmt.Errorf("%v\n%s", err, srv.logTail()))
		}
	}
	check(srv.run("warmup", "pthree", "null"))
	var seqT, fanT, threeT, floorT []time.Duration
	var overFloor []float64
	for rep := range processRepeats {
		// The floor is interleaved with the run it prices: half its rounds right before the
		// served run, half right after, so a loaded moment weighs on both alike.
		fl := floor.run(100)
		start := time.Now()
		check(srv.run(fmt.Sprintf("seq-%d", rep), "pseq", "null"))
		seqT = append(seqT, time.Since(start))
		fl += floor.run(100)
		floorT = append(floorT, fl)
		overFloor = append(overFloor, float64(seqT[rep])/float64(fl))

		start = time.Now()
		check(srv.run(fmt.Sprintf("fan-%d", rep), "pfan", fanInput()))
		fanT = append(fanT, time.Since(start))

		start = time.Now()
		errs := make([]error, 100)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = srv.run(fmt.Sprintf("three-%d-%d", rep, i), "pthree", "null") }()
		}
		wg.Wait()
		threeT = append(threeT, time.Since(start))
		check(errors.Join(errs...))
	}
	floor.close()
	stopT, err := srv.stop()
	check(err)
	check(noLeftovers(wend, plugin))

	var cliT []time.Duration
	for rep := range processRepeats {
		d, err := cliRun(wend, seqFile, filepath.Join(dir, fmt.Sprintf("cli-%d.db", rep)), filepath.Join(dir, fmt.Sprintf("cli-%d.log", rep)))
		if err != nil {
			fail(err)
		}
		cliT = append(cliT, d)
	}
	if err := noLeftovers(wend, plugin); err != nil {
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
		"serve_ready_ms", ms(readyT), "serve_stop_ms", ms(stopT), "repeats", processRepeats,
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

// served is a running `wend serve` and an HTTP client on its control socket.
type served struct {
	cmd  *exec.Cmd
	log  string
	api  *apiclient.Client
	done chan struct{} // closed when the process has exited; then werr is its Wait error
	werr error
	once sync.Once
}

// startServe starts `wend serve` on db with the workflows below flows registered and no TCP
// listener, and returns once the socket answers /v1/health and lists the workflows; the
// duration is exec to ready.
func startServe(wend, db, flows, logPath string) (*served, time.Duration) {
	logf, err := os.Create(logPath)
	if err != nil {
		fail(err)
	}
	defer logf.Close() // the child has its own descriptor
	sock := db + ".sock"
	s := &served{log: logPath, done: make(chan struct{}), api: apiclient.Unix(sock)}
	s.cmd = exec.Command(wend, "serve", "--db", db, "--http", "off", "--workflows", flows)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = childAttr()
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		fail(err)
	}
	go func() { s.werr = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := s.ready(); err == nil {
			return s, time.Since(start)
		} else if time.Now().After(deadline) {
			s.kill()
			fail(fmt.Errorf("wend serve not ready after 60s: %v\n%s", err, s.logTail()))
		}
		select {
		case <-s.done:
			fail(fmt.Errorf("wend serve exited before it was ready: %v\n%s", s.werr, s.logTail()))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// ready is nil once serve answers with an engine and has registered the three workflows.
func (s *served) ready() error { return s.api.Ready(context.Background(), 3) }

// run starts a run of the registered workflow under id and waits until it has closed; an
// error unless it completed.
func (s *served) run(id, workflow, input string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return s.api.RunToEnd(ctx, id, workflow, json.RawMessage(input))
}

// stop sends SIGTERM and waits for a clean exit (status 0); after 30 s it kills the process
// and reports an error. The duration is signal to exit.
func (s *served) stop() (time.Duration, error) {
	s.api.Close()
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("stop wend serve: %v", err)
	}
	select {
	case <-s.done:
		if s.werr != nil {
			return time.Since(start), fmt.Errorf("wend serve exited after SIGTERM: %v", s.werr)
		}
		return time.Since(start), nil
	case <-time.After(30 * time.Second):
		s.kill()
		return 0, errors.New("wend serve still running 30s after SIGTERM; killed")
	}
}

// kill ends the server at once unless it has exited; its plugin dies with it (the plugin
// host starts it with a parent-death signal). Safe to call more than once.
func (s *served) kill() {
	s.once.Do(func() {
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Kill()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
		}
	})
}

func (s *served) logTail() string { return tail(s.log) }

// tail is the end of a log file, for error messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return fmt.Sprintf("--- %s (end) ---\n%s", path, b)
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
	cmd.SysProcAttr = childAttr()
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("wend run %s: %v\n%s", file, err, tail(logPath))
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
