package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/bench/harness"
)

var (
	burstN    = flag.Int("serveburst-n", 20000, "serveburst: how many waiting runs to start through wend serve")
	burstHeap = flag.String("serveburst-heapprofile", "", "serveburst: write serve's live heap profile to FILE once every run waits, and to FILE.burst once 3/4 of the runs are started (that serve is bench/heapserve)")
)

// serveBurst: the memory of waiting runs as a user gets it, through a real `wend serve`
// (cmd/wend built from this checkout, its defaults: runs idle 5 minutes before they leave
// memory, at most engine.DefaultMaxResidentRuns resident), metrics, read side and all. N runs
// of the order workflow (one plugin call, then a signal wait with a 72 h timeout) are started
// at once by 32 clients over the control socket; once every run waits, serve's resident set
// (anonymous: heap and stacks; file: bbolt's map), its peak (VmHWM) and its CPU are read, then a
// signal's latency to one of the runs (median of 200), and the peak again.
// -serveburst-heapprofile runs bench/heapserve (wend's command line with a heap profile on
// request) instead and writes its live heap once every run waits, and once 3/4 of the runs are
// started (FILE.burst).
func (b *bench) serveBurst() {
	n := *burstN
	dir := b.path("serveburst")
	flows := filepath.Join(dir, "flows")
	if err := os.MkdirAll(flows, 0o755); err != nil {
		fail(err)
	}
	wend := filepath.Join(dir, "wend")
	goBuild(wend, "github.com/wendflow/wend/cmd/wend")
	goBuild(filepath.Join(flows, "p"), "github.com/wendflow/wend/examples/plugins/demo") // the order flow's ./p
	writeWorkflow(filepath.Join(flows, "order.wend.yaml"), "order", orderFlow)
	o := harness.Options{Bin: wend, DB: filepath.Join(dir, "serve.db"), Flags: []string{"--workflows", flows},
		Log: filepath.Join(dir, "serve.log"), Workflows: 1}
	var heap *heapAsk
	if *burstHeap != "" {
		heap = b.heapServe(&o, *burstHeap)
	}
	srv, check := serveFor(o, heap)
	pid := srv.PID()
	id := func(i int) string { return "b" + strconv.Itoa(i) }

	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 33)
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				input := json.RawMessage(`{"order": "` + strconv.Itoa(i) + `"}`)
				if err := srv.Start(context.Background(), id(i), "order", input); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	if heap != nil {
		// The burst's own live heap: starts in flight, tries queued, runs not yet waiting.
		wg.Go(func() {
			for next.Load() < int64(n*3/4) {
				time.Sleep(5 * time.Millisecond)
			}
			if err := heap.writeTo(heap.path + ".burst"); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	check(<-errs)
	started := time.Since(start)

	// Every run waits once the runs started last do (each run's first step is the same call,
	// taken in start order by the engine) and a sample across the rest does.
	var sample []int
	for i := 0; i < n; i += max(1, n/100) {
		sample = append(sample, i)
	}
	for i := max(0, n-64); i < n; i++ {
		sample = append(sample, i)
	}
	for _, i := range sample {
		for {
			waits, err := srv.WaitsForSignal(id(i))
			check(err)
			if waits {
				break
			}
			if time.Since(start) > 10*time.Minute {
				check(fmt.Errorf("run %s does not wait for its signal 10 minutes after the first start", id(i)))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waiting := time.Since(start)
	cpu := procCPU(pid)
	rss, anon, file := procRSSMB(pid), procStatusMB(pid, "RssAnon:"), procStatusMB(pid, "RssFile:")
	peakWaiting := procStatusMB(pid, "VmHWM:")
	if heap != nil {
		check(heap.write())
	}

	var ds []float64
	for i := range min(200, n) {
		s := time.Now()
		_, err := srv.API.Signal(context.Background(), id(i), "shipped", json.RawMessage(`"dhl"`))
		check(err)
		ds = append(ds, float64(time.Since(s))/float64(time.Millisecond))
	}
	peak := procStatusMB(pid, "VmHWM:")
	_, err := srv.Stop()
	check(err)
	check(harness.NoLeftovers(o.Bin, filepath.Join(flows, "p")))
	emit("serve_burst_waiting", "runs", n, "starts_per_s", round(float64(n)/started.Seconds()), "all_waiting_ms", round(float64(waiting)/float64(time.Millisecond)),
		"rss_mb_waiting", rss, "rss_anon_mb_waiting", anon, "rss_file_mb_waiting", file, "peak_rss_mb_waiting", peakWaiting,
		"peak_rss_mb", peak, "cpu_s_waiting", round(cpu.Seconds()), "signal_ms_median", round(medianOf(ds)),
		"note", "a real wend serve (cmd/wend, its defaults) with N runs started at once over the control socket by 32 clients, "+
			"each waiting on a signal with a 72 h timeout after one plugin call; its RSS once all wait (anonymous, file: bbolt's map), "+
			"its peak (VmHWM) then and after 200 signals, its CPU (utime+stime) until all wait, a signal's latency until durable (median)")
}
