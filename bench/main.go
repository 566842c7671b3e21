// Command bench measures wend's engine on the workloads of docs/performance.md and prints one JSON line
// per figure. Every engine figure is taken beside a plain synced bbolt Update of a similar
// record in the same run, so results read as ratios on any disk.
//
//	go run ./bench                 # all workloads
//	go run ./bench -only seq1000   # one of: update, seq1000, concurrent, foreach, resume, plugin, process, idle
//
// seq1000 is seqnoop (in-process no-op activities) and seqplugin (the Go example plugin).
// logstep (run only when named) prices seqplugin's step with the store's write-ahead log
// against one synced append plus one plugin call.
//
// shard (run only when named) runs a for_each over 1,000,000 no-op items with shard: 10000.
// servecpu (run only when named) reads `wend serve`'s own CPU per sequential plugin step.
// memory (run only when named) prints the peak RSS of each of the memory targets' bursts.
//
// process builds the wend binary and the example plugin and measures the plugin workloads
// through a real `wend serve` (over its control socket) and a cold `wend run`.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"
)

type figure struct {
	Name   string         `json:"name"`
	Values map[string]any `json:"values"`
}

func emit(name string, kv ...any) {
	f := figure{Name: name, Values: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Values[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(f)
	fmt.Println(string(b))
}

func main() {
	only := flag.String("only", "", "run one workload: update, seq1000 (= seqnoop + seqplugin), concurrent, foreach, resume, plugin, process, idle")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the run to this file")
	traceFile := flag.String("trace", "", "write an execution trace of the run to this file (go tool trace; -pprof=sched shows scheduling delays)")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			f, err := os.Create(*memprofile)
			if err != nil {
				fail(err)
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fail(err)
			}
		}()
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			fail(err)
		}
		if err := trace.Start(f); err != nil {
			fail(err)
		}
		defer trace.Stop()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	dir, err := os.MkdirTemp("", "wend-bench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	atFail(func() { os.RemoveAll(dir) })
	b := &bench{dir: dir}
	b.updateMs = b.plainUpdate()
	emit("bbolt_update", "ms_per_update", round(b.updateMs))
	workloads := []struct {
		name    string
		fn      func()
		partial bool // a part of another workload: run only when named
	}{
		{"seq1000", func() { b.sequential(); b.sequentialPlugin() }, false},
		{"seqnoop", b.sequential, true},
		{"seqplugin", b.sequentialPlugin, true},
		{"logstep", b.logStep, true},
		{"concurrent", b.concurrent, false},
		{"foreach", b.forEach, false},
		{"resume", b.resume, false},
		{"plugin", b.plugin, false},
		{"process", b.process, false},
		{"idle", b.idle, true}, // long at its default size: run it by name
		{"shard", b.shard, true},
		{"servecpu", b.serveCPU, true},
		{"memory", b.memory, true},
		{"serveburst", b.serveBurst, true},
	}
	for _, w := range workloads {
		if (*only == "" && !w.partial) || strings.EqualFold(*only, w.name) {
			w.fn()
		}
	}
}

// atFail registers fn to run, newest first, when fail exits (os.Exit skips deferred calls):
// child processes must not outlive a failed bench.
var onFail []func()

func atFail(fn func()) { onFail = append(onFail, fn) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	for i := len(onFail) - 1; i >= 0; i-- {
		onFail[i]()
	}
	os.Exit(1)
}

func round(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

func ms(d time.Duration) float64 { return round(float64(d) / float64(time.Millisecond)) }
