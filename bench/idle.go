package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// 100,000 waiting runs (docs/performance.md, "Waiting runs"), in process over a synced boltstore, as `wend serve`
// drives it (no HTTP in front):
//
//	go run ./bench -only idle -idle-n 100000
var (
	idleN          = flag.Int("idle-n", 10000, "idle: how many waiting runs")
	idleAfter      = flag.Duration("idle-after", time.Minute, "idle: engine.Options.IdleAfter of the evicting engine")
	idleTimers     = flag.Bool("idle-timers-only", false, "idle: only the timers part (due once starts at 200 a second would have ended)")
	idleWithTimers = flag.Bool("idle-timers", true, "idle: end with the timers part (false: skip it)")
	idleResident   = flag.Bool("idle-resident-only", false, "idle: only the resident part (the runs started and all in memory)")
	idleAsServe    = flag.Bool("idle-as-serve", false, "idle: the resident part's engine lets runs leave memory as wend serve's does by default (IdleAfter 5 min, and so engine.DefaultMaxResidentRuns)")
	idleHeap       = flag.String("idle-heapprofile", "", "idle: write a heap profile (live objects after a GC) to FILE while the resident part's runs all wait")
	timersAt       = flag.Duration("idle-timers-due", 0, "idle: with -idle-timers-only, the timers fall due this long after the first start (default n/200 seconds + 3 s)")
	fireProfile    = flag.String("idle-fire-cpuprofile", "", "idle: write a CPU profile of the timers' firing alone (their due time to the last run closed) to this file")
	idleDB         = flag.String("idle-db", "", "idle: only the serve part, over a copy of this database (as -idle-save left it; -idle-n as when it was saved)")
	idleSave       = flag.String("idle-save", "", "idle: copy the database as serve's first start left it (its file, log and what lies beside it) to this path, for -idle-db")
	idleWend       = flag.String("idle-wend", "", "idle: the wend binary the serve part starts (default: cmd/wend built from this checkout), to time another build")
	idleServeProf  = flag.String("idle-serve-cpuprofile", "", "idle: write serve's CPU profile from its exec to ready to FILE (that serve is bench/heapserve)")
	idleDump       = flag.String("idle-dump", "", "idle: save serve's /proc/PID/smaps at ready and after the start's repair (DIR/ready.smaps, DIR/repaired.smaps) and its heap profile right before SIGTERM (DIR/serve.heap; that serve is bench/heapserve)")
)

// orderFlow waits 72 h for a shipment signal after one activity: every run holds a timer
// (the wait's timeout) in the scheduler and waits on a signal.
const orderFlow = "plugins: {p: ./p}\nsteps:\n" +
	"  - {id: a, activity: p.echo, with: {order: \"${{ input.order }}\"}}\n" +
	"  - {id: shipped, wait_for_signal: shipped, timeout: 72h}\n" +
	"  - {activity: p.echo, with: \"${{ steps.shipped.output }}\"}\n"

// dueFlow sleeps until input.at, then calls one activity.
const dueFlow = "plugins: {p: ./p}\nsteps:\n  - delay: {until: \"${{ input.at }}\"}\n  - {activity: p.echo, with: 1}\n"

// idle measures what a waiting run costs:
//
//   - resident: n runs started (32 starters at once) and waiting, all in memory (no
//     eviction): live heap and RSS per run, starts a second, and a signal's latency to one
//     of them;
//   - evicted: a new engine over the same database with IdleAfter: start to ready
//     (engine.Resume registers each open run without replaying it), then to the end of the
//     start's repair (each run replayed once in the background, its tasks checked, dropped
//     from memory again), heap and RSS per run, and a signal's latency to a run out of memory
//     (the signal's commit and the rebuild by replay);
//   - serve: the same through a real `wend serve` process (idleserve.go);
//   - timers: n runs whose delays all end at the same second, with MaxResidentRuns 1,000:
//     from that second to the last run closed, and the commits the firing took.
//
// Signal latencies are medians of 200 signals sent one after another, each returning once
// durable. Heap is the live heap after a GC; RSS is the process's resident set now.
func (b *bench) idle() {
	n := *idleN
	if *idleTimers {
		startT := time.Duration(float64(n) / 400 * float64(time.Second)) // due after 2 × this
		if *timersAt > 0 {
			startT = (*timersAt - 3*time.Second) / 2
		}
		b.timers(n, startT)
		return
	}
	flow := b.workflow("order", orderFlow)
	src, _ := os.ReadFile(flow)
	db := b.path("idle.db")
	if *idleDB != "" {
		copyDB(*idleDB, db)
		b.idleServe(db, n)
		return
	}

	// Resident.
	base := liveHeap()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		fail(err)
	}
	var waiting atomic.Int64
	opts := engine.Options{Store: st, Activities: noop{}, MaxActivities: 512,
		Observe: func(_ history.Run, ev history.Event) {
			if ev.Type == history.TimerScheduled {
				waiting.Add(1)
			}
		}}
	if *idleAsServe {
		opts.IdleAfter = 5 * time.Minute
	}
	eng := engine.New(opts)
	startT := startMany(n, func(i int) {
		req := engine.StartRequest{WorkflowID: "o" + strconv.Itoa(i), SpecFile: flow, Source: string(src), Input: json.RawMessage(fmt.Sprintf(`{"order":%d}`, i))}
		if _, _, err := eng.Start(context.Background(), req); err != nil {
			fail(err)
		}
	})
	for waiting.Load() < int64(n) {
		time.Sleep(10 * time.Millisecond)
	}
	resHeap, resRSS, resPeak := liveHeap(), rssMB(), peakRSSMB()
	resAnon, resFile := procStatusMB(os.Getpid(), "RssAnon:"), procStatusMB(os.Getpid(), "RssFile:")
	resident := eng.Idle().Resident
	writeHeapProfile(*idleHeap)
	resSignal := signalMedian(eng, n-200, n)
	eng.Close()
	st.Close()
	eng, st = nil, nil
	base = min(base, liveHeap())
	resHeap = heapOver(resHeap, base)
	emit("idle_resident", "runs", n, "start_ms", ms(startT), "starts_per_s", int(float64(n)/startT.Seconds()),
		"heap_bytes_per_run", int(resHeap/uint64(n)), "rss_mb", rssMB(), "rss_mb_waiting", resRSS, "peak_rss_mb_waiting", resPeak,
		"rss_anon_mb_waiting", resAnon, "rss_file_mb_waiting", resFile, "resident_waiting", resident, "as_serve", *idleAsServe,
		"signal_ms_median", round(resSignal))
	if *idleResident {
		return
	}

	b.idleEvicted(db, n, base)
	b.idleServe(db, n)
	if *idleWithTimers {
		b.timers(n, startT)
	}
}

// idleEvicted is idle's second part: a new engine over the database the first left.
func (b *bench) idleEvicted(db string, n int, base uint64) {
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		fail(err)
	}
	eng := engine.New(engine.Options{Store: st, Activities: noop{}, MaxActivities: 512, IdleAfter: *idleAfter})
	t0, cpu0 := time.Now(), cpuTime()
	rep, err := eng.Resume(context.Background())
	ready, readyCPU := time.Since(t0), cpuTime()-cpu0
	// The 200 signalled runs closed, unless Close cut off their last step.
	if err != nil || rep.Resumed < n-200 || rep.Resumed > n {
		fail(fmt.Errorf("resume: resumed %d of %d: %v", rep.Resumed, n-200, err))
	}
	atReady := eng.Idle()
	rr, err := eng.ResumeRepaired(context.Background())
	repaired, repairedCPU := time.Since(t0), cpuTime()-cpu0
	if err != nil || len(rr.Rebuilt) > 0 || len(rr.Blocked) > 0 {
		fail(fmt.Errorf("the start's repair: %d rebuilt, %d blocked: %v", len(rr.Rebuilt), len(rr.Blocked), err))
	}
	idle := eng.Idle()
	evHeap, evRSS := liveHeap(), rssMB()
	evSignal := signalMedian(eng, 0, 200)
	after := eng.Idle()
	eng.Close()
	st.Close()
	eng, st = nil, nil
	evHeap = heapOver(evHeap, min(base, liveHeap()))
	emit("idle_evicted", "runs", rep.Resumed, "start_to_ready_ms", ms(ready), "start_to_ready_cpu_ms", ms(readyCPU),
		"replayed_at_ready", atReady.Rebuilt, "start_to_repaired_ms", ms(repaired), "start_to_repaired_cpu_ms", ms(repairedCPU),
		"resident_after_repair", idle.Resident, "heap_bytes_per_run", int(evHeap/uint64(rep.Resumed)), "rss_mb", evRSS,
		"signal_ms_median", round(evSignal), "rebuilt", after.Rebuilt-idle.Rebuilt, "idle_after", idleAfter.String())
}

// timers: n runs sleep until the same second, then each records TimerFired and calls one
// no-op; the figure is that second to the last run closed.
func (b *bench) timers(n int, startT time.Duration) {
	flow := b.workflow("due", dueFlow)
	src, _ := os.ReadFile(flow)
	st, err := boltstore.Open(b.path("timers.db"), boltstore.Options{})
	if err != nil {
		fail(err)
	}
	defer st.Close()
	var closed atomic.Int64
	done := make(chan struct{})
	eng := engine.New(engine.Options{Store: st, Activities: noop{}, MaxActivities: 512, MaxResidentRuns: 1000,
		Observe: func(_ history.Run, ev history.Event) {
			if ev.Type.Terminal() && closed.Add(1) == int64(n) {
				close(done)
			}
		}})
	defer eng.Close()
	// Due well after every start: twice the resident phase's start time, plus 3 s.
	at := time.Now().Add(2*startT + 3*time.Second).Truncate(time.Second).Add(time.Second)
	in := fmt.Sprintf(`{"at": %q}`, at.UTC().Format(time.RFC3339))
	startMany(n, func(i int) {
		req := engine.StartRequest{WorkflowID: "t" + strconv.Itoa(i), SpecFile: flow, Source: string(src), Input: json.RawMessage(in)}
		if _, _, err := eng.Start(context.Background(), req); err != nil {
			fail(err)
		}
	})
	late := time.Since(at)
	time.Sleep(time.Until(at.Add(-time.Second))) // waiting, as the sweep left them, just before they are due
	idle := eng.Idle()
	heapMB, rssWaiting := round(float64(liveHeap())/(1<<20)), rssMB()
	txBefore := st.Stats()
	time.Sleep(time.Until(at))
	stopProfile := startProfile(*fireProfile)
	cpu0 := cpuTime()
	select {
	case <-done:
	case <-time.After(time.Until(at) + 5*time.Minute):
		fail(fmt.Errorf("timers: %d of %d runs closed 5 minutes after their timers were due", closed.Load(), n))
	}
	took, cpu := time.Since(at), cpuTime()-cpu0
	stopProfile()
	rebuilt := eng.Idle().Rebuilt - idle.Rebuilt
	s := st.Stats()
	note := ""
	if late > 0 {
		note = fmt.Sprintf("starting took longer than planned: the last run started %s after the due time", late.Round(time.Millisecond))
	}
	emit("timers_same_second", "runs", n, "due_to_last_closed_ms", ms(took), "cpu_ms", ms(cpu),
		"resident_before_due", idle.Resident, "live_heap_mb_before_due", heapMB, "rss_mb_before_due", rssWaiting,
		"rebuilt", rebuilt, "commits", s.Commits-txBefore.Commits, "transactions", s.Transactions-txBefore.Transactions,
		"rss_mb", rssMB(), "peak_rss_mb", peakRSSMB(), "note", note)
}

// copyDB copies a closed database at from (its file and what lies beside it named after it:
// the log's folder, the plugin registry) to to, the pid and lock files left out. cp keeps the
// log's preallocated segments sparse.
func copyDB(from, to string) {
	dir, base := filepath.Dir(from), filepath.Base(from)
	ents, err := os.ReadDir(dir)
	if err != nil {
		fail(err)
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasSuffix(name, ".pid") || strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".sock") {
			continue
		}
		dst := to + strings.TrimPrefix(name, base)
		os.RemoveAll(dst)
		if out, err := exec.Command("cp", "-a", "--sparse=always", filepath.Join(dir, name), dst).CombinedOutput(); err != nil {
			fail(fmt.Errorf("copy %s: %v: %s", name, err, out))
		}
	}
}

// startProfile starts a CPU profile to path, when it is set, and returns what stops it.
func startProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fail(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// startMany calls start(i) for i in [0, n) from 32 goroutines and returns how long it took.
func startMany(n int, start func(i int)) time.Duration {
	t0 := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				start(i)
			}
		}()
	}
	wg.Wait()
	return time.Since(t0)
}

// signalMedian sends the shipment signal to runs o[from..to), one after another, and returns
// the median time a Signal call took, in ms.
func signalMedian(eng *engine.Engine, from, to int) float64 {
	var ds []float64
	for i := from; i < to; i++ {
		t0 := time.Now()
		if err := eng.Signal(context.Background(), "o"+strconv.Itoa(i), "shipped", json.RawMessage(`"dhl"`)); err != nil {
			fail(err)
		}
		ds = append(ds, float64(time.Since(t0))/float64(time.Millisecond))
	}
	return medianOf(ds)
}

// heapOver is the live heap with the runs less the baseline: the lower of the heap before the
// first engine opened and after each engine closed (0 if the baseline is higher).
func heapOver(with, base uint64) uint64 {
	if with < base {
		return 0
	}
	return with - base
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// rssMB is this process's resident set size now (VmRSS), in MB; -1 where /proc is missing.
func rssMB() float64 { return procRSSMB(os.Getpid()) }

// writeHeapProfile writes the live heap's profile to path, when it is set (liveHeap has just
// run a GC).
func writeHeapProfile(path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		fail(err)
	}
}
