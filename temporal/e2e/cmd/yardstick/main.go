// Command yardstick measures wend on Temporal against plain Temporal and local wend, in one
// process and one run, on issue 13's three workloads: 200 sequential activities, 200 in a
// for_each (all at once), and 100 runs of 3 sequential activities started together. Every
// activity is the same in-process no-op (it returns its input), so the figures are the
// engines' own costs.
//
//	cd temporal/e2e && GOTOOLCHAIN=go1.26.11 go run ./cmd/yardstick [-rounds 5]
//
// The systems:
//   - plain: Go SDK workflows written by hand (one ExecuteActivity per step), on the
//     embedded server (devserver) with one worker;
//   - wend-temporal: the same workloads as .wend.yaml files run by workflow wend.v1 on the
//     same server with one worker;
//   - local: the same files on wend's local engine (bbolt, synced commits).
//
// Each round runs every workload on every system; the table gives the median time and the
// medians of the per-round ratios wend-temporal/plain and local/plain (a ratio taken
// within a round cancels the machine's drift between rounds). Last, 200 runs of each kind
// are parked after one activity in the worker's cache, and the live heap they add is
// printed per run (server and worker share this process, so plain's figure is the base).
//
// -scale N runs the 100 × 3 workload on wend on Temporal with one worker process and with
// two (this command started again with -serve-worker), N rounds, and prints the median
// ratio two/one. Only that: go run ./cmd/yardstick -rounds 0 -heap=false -scale 5
// With -scale-work and -scale-slots each worker process has that many task slots and each
// activity takes that long, so the workers, not the server, bound the workload, as when
// plugins do real work: go run ./cmd/yardstick -rounds 0 -heap=false -scale 5
// -scale-work 50ms -scale-slots 10
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wendflow/wend/temporal/e2e/devserver"
	"go.temporal.io/sdk/client"
)

type workload struct {
	name  string
	plain func(ctx context.Context) error
	wend  func(ctx context.Context) error
	local func(ctx context.Context) error
}

func main() {
	rounds := flag.Int("rounds", 5, "rounds; the table shows medians (0: none)")
	heap := flag.Bool("heap", true, "measure the heap per parked run")
	scale := flag.Int("scale", 3, "rounds of 100 runs x 3 with one worker process against two (0: none)")
	flag.DurationVar(&workerLoad.work, "scale-work", 0, "-scale's activities take this long each (simulated I/O-bound plugin work; 0: the no-op)")
	flag.IntVar(&workerLoad.slots, "scale-slots", 0, "-scale's task slots per worker process (MaxConcurrentActivityExecutionSize; 0: the SDK's default)")
	serve := flag.Bool("serve-worker", false, "internal: be a worker process for -scale")
	addr := flag.String("addr", "", "internal: -serve-worker's frontend")
	namespace := flag.String("namespace", "", "internal: -serve-worker's namespace")
	queue := flag.String("queue", "", "internal: -serve-worker's task queue")
	flag.Parse()
	if *serve {
		if err := serveWorker(*addr, *namespace, *queue); err != nil {
			fmt.Fprintln(os.Stderr, "yardstick worker:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*rounds, *heap, *scale); err != nil {
		fmt.Fprintln(os.Stderr, "yardstick:", err)
		os.Exit(1)
	}
}

func run(rounds int, heap bool, scale int) error {
	if rounds < 0 || scale < 0 {
		return fmt.Errorf("-rounds %d, -scale %d: want 0 or more", rounds, scale)
	}
	dir, err := os.MkdirTemp("", "wend-yardstick-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := devserver.Start(devserver.Options{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: srv.Namespace(), Logger: quiet{}})
	if err != nil {
		return fmt.Errorf("dial %s: %w", srv.Addr(), err)
	}
	defer c.Close()

	p, err := startPlain(c)
	if err != nil {
		return err
	}
	defer p.stop()
	l, err := newLocal(dir)
	if err != nil {
		return err
	}
	defer l.close()
	wt, err := startWendTemporal(c)
	if err != nil {
		return err
	}
	defer wt.stop()

	works := []workload{
		{name: "200 sequential", plain: p.seq, local: l.seq, wend: wt.seq},
		{name: "200 in a for_each", plain: p.fan, local: l.fan, wend: wt.fan},
		{name: "100 runs x 3", plain: p.three, local: l.three, wend: wt.three},
	}
	ctx := context.Background()
	if rounds > 0 {
		if err := timeRounds(ctx, rounds, works); err != nil {
			return err
		}
	}
	if scale > 0 {
		if err := scaleOut(ctx, c, srv.Addr(), srv.Namespace(), scale); err != nil {
			return err
		}
	}
	if !heap {
		return nil
	}
	// Runs parked after one activity, kept in the worker's sticky cache: the heap they hold.
	// 10 Temporal events = started, a workflow task (3), the activity (3), the next workflow task (3).
	const parked = 200
	pk, err := heapPerOpenRun(ctx, c, parked, 10, func(i int) (client.WorkflowRun, error) {
		return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("parked-plain-%d", i), TaskQueue: plainQueue}, "plain.parked")
	})
	if err != nil {
		return fmt.Errorf("heap per open plain run: %w", err)
	}
	wk, err := heapPerOpenRun(ctx, c, parked, 10, func(i int) (client.WorkflowRun, error) {
		return wt.start(ctx, "parked", waitSpec, nil)
	})
	if err != nil {
		return fmt.Errorf("heap per open wend run: %w", err)
	}
	fmt.Printf("\nheap per open run parked after one activity (%d runs, server and worker in this process): plain %.1f KiB, wend %.1f KiB; wend's own state %.1f KiB a run\n",
		parked, pk, wk, wk-pk)
	return nil
}

func timeRounds(ctx context.Context, rounds int, works []workload) error {
	// One untimed pass: the worker's caches, the plugin-free engine and the server's
	// task queues warm up before anything is measured.
	for _, w := range works {
		for _, fn := range []func(context.Context) error{w.plain, w.wend, w.local} {
			if err := fn(ctx); err != nil {
				return fmt.Errorf("%s (warm-up): %w", w.name, err)
			}
		}
	}
	type times struct{ plain, wend, local, wendRatio, localRatio []float64 }
	res := make([]times, len(works))
	for r := range rounds {
		for i, w := range works {
			pt, err := timed(ctx, w.plain)
			if err != nil {
				return fmt.Errorf("%s plain, round %d: %w", w.name, r, err)
			}
			lt, err := timed(ctx, w.local)
			if err != nil {
				return fmt.Errorf("%s local, round %d: %w", w.name, r, err)
			}
			res[i].plain = append(res[i].plain, pt)
			res[i].local = append(res[i].local, lt)
			res[i].localRatio = append(res[i].localRatio, lt/pt)
			wt, err := timed(ctx, w.wend)
			if err != nil {
				return fmt.Errorf("%s wend-temporal, round %d: %w", w.name, r, err)
			}
			res[i].wend = append(res[i].wend, wt)
			res[i].wendRatio = append(res[i].wendRatio, wt/pt)
		}
	}
	fmt.Printf("rounds: %d (medians; every activity an in-process no-op; one worker)\n\n", rounds)
	fmt.Println("| workload | plain Temporal ms | wend on Temporal ms | local wend ms | wend-temporal / plain | local / plain |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for i, w := range works {
		t := res[i]
		fmt.Printf("| %s | %.0f | %s | %.0f | %s | %.3f |\n", w.name, median(t.plain), orDash(t.wend, "%.0f"),
			median(t.local), orDash(t.wendRatio, "%.2f"), median(t.localRatio))
	}
	fmt.Println()
	for i, w := range works {
		fmt.Printf("%s: wend-temporal/plain per round %s; local/plain per round %s\n", w.name,
			fmtAll(res[i].wendRatio, "%.2f"), fmtAll(res[i].localRatio, "%.3f"))
	}
	return nil
}

func timed(ctx context.Context, fn func(context.Context) error) (float64, error) {
	start := time.Now()
	err := fn(ctx)
	return float64(time.Since(start)) / float64(time.Millisecond), err
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func orDash(xs []float64, format string) string {
	if len(xs) == 0 {
		return "—"
	}
	return fmt.Sprintf(format, median(xs))
}

func fmtAll(xs []float64, format string) string {
	if len(xs) == 0 {
		return "—"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// quiet drops the SDK's log lines (warnings about the sticky cache and pollers would
// interleave with the table).
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"sdk error:", msg}, kv...)...)
}
