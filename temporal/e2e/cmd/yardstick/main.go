// Command yardstick measures wend against plain Temporal in one run, on the three
// workloads: 200 sequential activities, 200 in a for_each (all at once), and 100 runs of 3
// sequential activities started together.
//
//	cd temporal/e2e && GOTOOLCHAIN=go1.26.11 go run ./cmd/yardstick [-rounds 7] [-workloads seq]
//
// The Temporal dev server (devserver, tuned: see tuned) runs as its own process by default
// (this command started again with -devserver-child), as users run `temporal server
// start-dev`: the workers below live in the yardstick and reach it over localhost gRPC, so
// every workflow and activity task crosses a process boundary, as wend's plugin calls do.
// -devserver in-process keeps the server in the yardstick's process, beside its workers.
//
// The systems:
//   - plain: Go SDK workflows written by hand (one ExecuteActivity per step), on the dev
//     server with one worker whose activity is an in-process no-op (it returns its input);
//   - wend-temporal: the same workloads as .wend.yaml files run by workflow wend.v1 on the
//     same server with one worker, over the same no-op;
//   - local: the same files on wend's local engine in this process (bbolt, synced commits),
//     over an in-process no-op;
//   - serve plugin (+log): a real `wend serve` process (cmd/wend, built as go run ./bench
//     builds it) with the files registered, each run started with POST /v1/runs and awaited
//     with GET /v1/runs/{id}/wait over its control socket, its activities calls to the
//     example Go plugin's process; +log with the store's write-ahead log (WEND_STORE_LOG=1);
//   - serve no-op (+log): the same `wend serve` command line answering every activity in its
//     process with its input (./wendserve, cli.Extensions.Activities), as plain's worker does.
//
// Each round runs every workload on every system, the systems' order rotated from round to
// round; the tables give the median times and the medians of the per-round ratios to plain
// (a ratio taken within a round cancels the machine's drift between rounds). -serve=false
// leaves the serve systems out; -serve-cpuprofile DIR writes a CPU profile of each serve
// process of this checkout; -serve-compare WEND adds the serve plugin systems on another wend binary, for an
// A/B of two builds in the same rounds; -settle D pauses D before each timed run. Last, 200 runs of each kind are parked after one activity in the worker's cache,
// and the live heap they add is printed per run (plain's figure is the base; with -devserver
// in-process it holds the server's share too).
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
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wendflow/wend/temporal/e2e/devserver"
	"go.temporal.io/sdk/client"
)

// system runs the three workloads one way; fns is indexed like workloadNames.
type system struct {
	name string
	fns  [3]func(ctx context.Context) error
}

var workloadNames = [3]string{"200 sequential", "200 in a for_each", "100 runs x 3"}

func main() {
	rounds := flag.Int("rounds", 5, "rounds; the table shows medians (0: none)")
	heap := flag.Bool("heap", true, "measure the heap per parked run")
	scale := flag.Int("scale", 3, "rounds of 100 runs x 3 with one worker process against two (0: none)")
	flag.DurationVar(&workerLoad.work, "scale-work", 0, "-scale's activities take this long each (simulated I/O-bound plugin work; 0: the no-op)")
	flag.IntVar(&workerLoad.slots, "scale-slots", 0, "-scale's task slots per worker process (MaxConcurrentActivityExecutionSize; 0: the SDK's default)")
	var o options
	flag.BoolVar(&o.serve, "serve", true, "also run the workloads through real `wend serve` processes (plugin and no-op, with and without the store's log)")
	flag.StringVar(&o.profileDir, "serve-cpuprofile", "", "write a CPU profile of each `wend serve` process into this directory (written at its stop)")
	flag.BoolVar(&o.untuned, "untuned", false, "leave the dev server's history.transferProcessorMaxPollRPS at Temporal's default (20)")
	flag.StringVar(&o.devserver, "devserver", "process", "where the Temporal dev server runs: process (its own, as `temporal server start-dev`; the workers reach it over localhost gRPC) or in-process (server, workers and plain workflows share this process)")
	flag.DurationVar(&o.settle, "settle", 0, "pause this long before each timed run, so the run before's background work (the dev server's after a workflow, the kernel's writeback) is not timed with it")
	flag.StringVar(&o.compare, "serve-compare", "", "also run the serve plugin systems on this prebuilt wend binary (an A/B of two builds in the same rounds)")
	only := flag.String("workloads", "seq,fan,three", "the workloads to time, of seq, fan, three")
	serve := flag.Bool("serve-worker", false, "internal: be a worker process for -scale")
	addr := flag.String("addr", "", "internal: -serve-worker's frontend")
	namespace := flag.String("namespace", "", "internal: -serve-worker's namespace")
	queue := flag.String("queue", "", "internal: -serve-worker's task queue")
	child := flag.Bool("devserver-child", false, "internal: be the dev server process for -devserver process")
	flag.Parse()
	if *child {
		if err := devserverChild(o.untuned); err != nil {
			fmt.Fprintln(os.Stderr, "yardstick dev server:", err)
			os.Exit(1)
		}
		return
	}
	if o.devserver != "process" && o.devserver != "in-process" {
		fmt.Fprintf(os.Stderr, "yardstick: -devserver %q: give process or in-process\n", o.devserver)
		os.Exit(2)
	}
	if *serve {
		if err := serveWorker(*addr, *namespace, *queue); err != nil {
			fmt.Fprintln(os.Stderr, "yardstick worker:", err)
			os.Exit(1)
		}
		return
	}
	for _, name := range strings.Split(*only, ",") {
		i := slices.Index([]string{"seq", "fan", "three"}, strings.TrimSpace(name))
		if i < 0 {
			fmt.Fprintf(os.Stderr, "yardstick: -workloads %q: give a list of seq, fan, three\n", *only)
			os.Exit(2)
		}
		o.workloads = append(o.workloads, i)
	}
	if err := run(*rounds, *heap, *scale, o); err != nil {
		fmt.Fprintln(os.Stderr, "yardstick:", err)
		os.Exit(1)
	}
}

// options are the flags that choose what is timed.
type options struct {
	serve      bool
	profileDir string
	compare    string
	untuned    bool
	devserver  string // "process" or "in-process"
	workloads  []int  // indexes into workloadNames
	settle     time.Duration
}

// tuned is what the dev server is given unless -untuned: Temporal's history service polls
// its transfer queue at most 20 times a second (history.transferProcessorMaxPollRPS), and a
// sequential workflow makes a transfer task for every activity and workflow task, so past
// a burst of about 20 steps each one waited ~45 ms for the next poll: 200 sequential no-op
// activities took 10 s against 1.3 s with the limit lifted.
var tuned = map[string]any{"history.transferProcessorMaxPollRPS": 10000}

// dynamicConfig is the dev server's dynamic configuration: tuned unless untuned.
func dynamicConfig(untuned bool) map[string]any {
	if untuned {
		return nil
	}
	return tuned
}

// temporalServer is the dev server, wherever it runs: its frontend, its namespace and the
// CPU time its process has used (with -devserver in-process, this process's: the server's,
// the workers' and the clients').
type temporalServer struct {
	addr, ns string
	cpu      func() time.Duration
	stop     func() error
}

func startTemporal(where string, untuned bool) (*temporalServer, error) {
	if where == "in-process" {
		srv, err := devserver.Start(devserver.Options{Dynamic: dynamicConfig(untuned)})
		if err != nil {
			return nil, err
		}
		return &temporalServer{addr: srv.Addr(), ns: srv.Namespace(), cpu: selfCPU, stop: srv.Stop}, nil
	}
	p, err := startServerProc(untuned)
	if err != nil {
		return nil, err
	}
	return &temporalServer{addr: p.addr, ns: p.ns, cpu: p.cpu, stop: p.stop}, nil
}

func run(rounds int, heap bool, scale int, o options) error {
	if rounds < 0 || scale < 0 {
		return fmt.Errorf("-rounds %d, -scale %d: want 0 or more", rounds, scale)
	}
	dir, err := os.MkdirTemp("", "wend-yardstick-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := startTemporal(o.devserver, o.untuned)
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "yardstick:", err)
		}
	}()
	c, err := client.Dial(client.Options{HostPort: srv.addr, Namespace: srv.ns, Logger: quiet{}})
	if err != nil {
		return fmt.Errorf("dial %s: %w", srv.addr, err)
	}
	defer c.Close()
	where, tuning := "in this process, with its workers", "tuned"
	if o.devserver == "process" {
		where = "its own process, the workers in this one reaching it over localhost gRPC"
	}
	if o.untuned {
		tuning = "untuned"
	}
	fmt.Printf("Temporal dev server (%s) at %s: %s\n", tuning, srv.addr, where)

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

	systems := []system{
		{name: "plain Temporal", fns: [3]func(context.Context) error{p.seq, p.fan, p.three}},
		{name: "wend on Temporal", fns: [3]func(context.Context) error{wt.seq, wt.fan, wt.three}},
		{name: "local wend", fns: [3]func(context.Context) error{l.seq, l.fan, l.three}},
	}
	ctx := context.Background()
	if rounds > 0 && o.serve {
		bins, err := buildServe(dir)
		if err != nil {
			return err
		}
		kinds := serveKinds
		if o.compare != "" {
			kinds = append(slices.Clone(kinds), serveKind{name: "compare plugin", wend: o.compare},
				serveKind{name: "compare plugin +log", log: true, wend: o.compare})
		}
		for _, k := range kinds {
			prof := ""
			// A profile runs the kind on wendserve, built from this checkout: never for a
			// -serve-compare kind, which must run the other binary.
			if o.profileDir != "" && k.wend == "" {
				prof = filepath.Join(o.profileDir, strings.NewReplacer(" ", "-", "+", "").Replace(k.name)+".pprof")
			}
			s, err := startServe(ctx, bins, k, dir, prof)
			if err != nil {
				return err
			}
			defer s.Kill()
			defer func() {
				if err := s.stop(); err != nil {
					fmt.Fprintln(os.Stderr, "yardstick:", err)
				}
			}()
			systems = append(systems, system{name: k.name, fns: [3]func(context.Context) error{s.seq, s.fan, s.three}})
		}
	}
	if rounds > 0 {
		if err := timeRounds(ctx, rounds, systems, o.workloads, o.settle); err != nil {
			return err
		}
	}
	if scale > 0 {
		if err := scaleOut(ctx, c, srv.addr, srv.ns, srv.cpu, scale); err != nil {
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
	held := "the worker's heap; the server is its own process"
	if o.devserver == "in-process" {
		held = "server and worker share this process"
	}
	fmt.Printf("\nheap per open run parked after one activity (%d runs, %s): plain %.1f KiB, wend %.1f KiB; wend's own state %.1f KiB a run\n",
		parked, held, pk, wk, wk-pk)
	return nil
}

// timeRounds runs every chosen workload on every system in each round, the systems' order
// rotated from round to round, and prints the median times and the medians of the
// per-round ratios system / plain Temporal (systems[0]). settle is a pause before each timed
// run.
func timeRounds(ctx context.Context, rounds int, systems []system, workloads []int, settle time.Duration) error {
	// One untimed pass: the worker's caches, the engines and the server's task queues warm
	// up before anything is measured.
	for _, w := range workloads {
		for _, sy := range systems {
			if err := sy.fns[w](ctx); err != nil {
				return fmt.Errorf("%s on %s (warm-up): %w", workloadNames[w], sy.name, err)
			}
		}
	}
	// ms[w][s] are the times of workload w on system s, one a round.
	ms := make([][][]float64, len(workloadNames))
	for _, w := range workloads {
		ms[w] = make([][]float64, len(systems))
	}
	for r := range rounds {
		for _, w := range workloads {
			for i := range systems {
				s := (i + r) % len(systems)
				time.Sleep(settle)
				t, err := timed(ctx, systems[s].fns[w])
				if err != nil {
					return fmt.Errorf("%s on %s, round %d: %w", workloadNames[w], systems[s].name, r, err)
				}
				ms[w][s] = append(ms[w][s], t)
			}
		}
	}
	fmt.Printf("rounds: %d (medians; plain Temporal and wend on Temporal: an in-process no-op activity in one worker; "+
		"local wend: in-process no-op; serve plugin: cmd/wend serve + the example Go plugin; serve no-op: the same serve "+
		"answering activities in its process; +log: WEND_STORE_LOG=1)\n\n", rounds)
	fmt.Print("| workload |")
	for _, sy := range systems {
		fmt.Printf(" %s ms |", sy.name)
	}
	fmt.Print("\n|---|" + strings.Repeat("---:|", len(systems)) + "\n")
	for _, w := range workloads {
		fmt.Printf("| %s |", workloadNames[w])
		for s := range systems {
			fmt.Printf(" %.0f |", median(ms[w][s]))
		}
		fmt.Println()
	}
	fmt.Print("\n| workload |")
	for _, sy := range systems[1:] {
		fmt.Printf(" %s / plain |", sy.name)
	}
	fmt.Print("\n|---|" + strings.Repeat("---:|", len(systems)-1) + "\n")
	for _, w := range workloads {
		fmt.Printf("| %s |", workloadNames[w])
		for s := 1; s < len(systems); s++ {
			fmt.Printf(" %.3f |", median(ratios(ms[w][s], ms[w][0])))
		}
		fmt.Println()
	}
	fmt.Println()
	for _, w := range workloads {
		for s := 1; s < len(systems); s++ {
			fmt.Printf("%s, %s / plain per round: %s\n", workloadNames[w], systems[s].name, fmtAll(ratios(ms[w][s], ms[w][0]), "%.3f"))
		}
	}
	return nil
}

func ratios(xs, ys []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = xs[i] / ys[i]
	}
	return out
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
