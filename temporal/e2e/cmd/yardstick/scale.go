package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/driver"
	twork "github.com/wendflow/wend/temporal/worker"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// workerProc is this command started again with -serve-worker: a wend worker in its own
// process (driver and worker.Activities.Call over the no-op), with its own task slots.
type workerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startWorkerProc starts a worker process on queue and waits until it polls.
func startWorkerProc(addr, namespace, queue string) (*workerProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-serve-worker", "-addr", addr, "-namespace", namespace, "-queue", queue,
		"-scale-work", workerLoad.work.String(), "-scale-slots", fmt.Sprint(workerLoad.slots))
	stdin, out, err := startChild(cmd)
	if err != nil {
		return nil, err
	}
	line, err := out.ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("worker process on %s: said %q (%v)", queue, line, err)
	}
	return &workerProc{cmd: cmd, stdin: stdin}, nil
}

// stop closes the worker's stdin (it then stops gracefully) and returns the CPU time it used.
func (p *workerProc) stop() time.Duration {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-done
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

// serveWorker is the -serve-worker mode: a worker on queue until stdin closes.
func serveWorker(addr, namespace, queue string) error {
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: namespace, Logger: quiet{}})
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer c.Close()
	w, err := startLoadedWorker(c, queue, workerLoad)
	if err != nil {
		return err
	}
	defer w.Stop()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// scaleOut runs the 100 runs × 3 activities workload on wend on Temporal with one worker
// process and with two, each on its own task queue, in alternating order each round, and
// prints the median times and the median of the per-round ratios two/one, and the CPU each
// side used (serverCPU: the dev server's process, which is this one with -devserver
// in-process): a second worker cannot help once the server holds the cores.
func scaleOut(ctx context.Context, c client.Client, addr, namespace string, serverCPU func() time.Duration, rounds int) error {
	var procs []*workerProc
	start := func(queue string, n int) (*wendTemporal, error) {
		for range n {
			p, err := startWorkerProc(addr, namespace, queue)
			if err != nil {
				return nil, err
			}
			procs = append(procs, p)
		}
		return &wendTemporal{c: c, queue: queue}, nil
	}
	var workerCPU time.Duration
	defer func() {
		for _, p := range procs {
			workerCPU += p.stop()
		}
	}()
	one, err := start("yardstick-one-worker", 1)
	if err != nil {
		return err
	}
	two, err := start("yardstick-two-workers", 2)
	if err != nil {
		return err
	}
	for _, wt := range []*wendTemporal{one, two} { // warm-up, untimed
		if err := wt.three(ctx); err != nil {
			return fmt.Errorf("100 runs x 3 (warm-up): %w", err)
		}
	}
	serverBefore := serverCPU()
	var ones, twos, ratios []float64
	for r := range rounds {
		order := []*wendTemporal{one, two}
		if r%2 == 1 {
			order = []*wendTemporal{two, one}
		}
		got := map[*wendTemporal]float64{}
		for _, wt := range order {
			ms, err := timed(ctx, wt.three)
			if err != nil {
				return fmt.Errorf("100 runs x 3 on %s, round %d: %w", wt.queue, r, err)
			}
			got[wt] = ms
		}
		ones, twos = append(ones, got[one]), append(twos, got[two])
		ratios = append(ratios, got[two]/got[one])
	}
	serverUsed := serverCPU() - serverBefore
	for _, p := range procs {
		workerCPU += p.stop()
	}
	procs = nil
	fmt.Printf("\nscale-out, 100 runs x 3 activities on wend on Temporal, worker processes (rounds: %d, %d CPUs; activity work %s, slots per worker %d (0: SDK default)):\n",
		rounds, runtime.NumCPU(), workerLoad.work, workerLoad.slots)
	fmt.Printf("one worker %.0f ms, two workers %.0f ms (medians); two/one %.2f, per round %s\n",
		median(ones), median(twos), median(ratios), fmtAll(ratios, "%.2f"))
	fmt.Printf("CPU: server process %.1f s during the rounds; worker processes %.1f s in all (warm-up included)\n",
		serverUsed.Seconds(), workerCPU.Seconds())
	return nil
}

// selfCPU is the CPU time this process has used (the server's and the client's).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// load is what a -scale worker process's activities cost: each takes work (a sleep, as a
// plugin waiting on a remote service would), and the worker runs at most slots at once.
type load struct {
	work  time.Duration
	slots int
}

// workerLoad is -scale-work and -scale-slots.
var workerLoad load

// startLoadedWorker is startWendWorker with l's task slots and activity cost.
func startLoadedWorker(c client.Client, queue string, l load) (worker.Worker, error) {
	w := worker.New(c, queue, worker.Options{MaxConcurrentActivityExecutionSize: l.slots})
	driver.Register(w)
	acts := &twork.Activities{Plugins: sleepActs{l.work}, Client: c}
	acts.Register(w)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("wend worker on %s: %w", queue, err)
	}
	return w, nil
}

// sleepActs answers every activity with its input after d (at once when d is 0).
type sleepActs struct{ d time.Duration }

func (s sleepActs) Execute(ctx context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	if s.d > 0 {
		select {
		case <-time.After(s.d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.Input, nil
}
