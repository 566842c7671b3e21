package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/bench/harness"
)

// idleServe is idle's third part, how long `wend serve` takes to start with N open
// runs, through a real process: `wend serve` (no TCP listener) on the database the first two
// parts left, with the example Go plugin built where the order workflow looks for ./p.
//
//   - ready: exec to the first GET /v1/health on the control socket that answers ok with an
//     engine. The socket listens once the engine has resumed (engine.Resume: every open run
//     registered, every stored task re-armed), so a signal or a start sent from then on is
//     taken; the process's CPU time and RSS then.
//   - repaired: exec to the log line of the start's repair, which replays each run not yet
//     touched in the background to check its tasks (engine.Resume); RSS then, split into
//     anonymous and file-backed (bbolt's map of the file), and the most of each sampled every
//     20 ms while the repair ran.
//   - signals: 200 one after another to waiting runs out of memory, right after ready (while
//     the repair runs) and 200 more after it, each until durable (POST .../signals answers
//     once the signal is committed); medians;
//   - the process's peak RSS (VmHWM) before SIGTERM, and its CPU time to its exit.
func (b *bench) idleServe(db string, n int) {
	if n < 800 {
		return // its signals go to runs o200..o599, which the earlier parts left waiting (they signal o0..o199 and the last 200)
	}
	dir := filepath.Dir(db)
	wend := *idleWend
	if wend == "" {
		wend = b.path("wend")
		goBuild(wend, "github.com/wendflow/wend/cmd/wend")
	}
	goBuild(filepath.Join(dir, "p"), "github.com/wendflow/wend/examples/plugins/demo") // the order flow's ./p
	o := harness.Options{Bin: wend, DB: db, Flags: []string{"--idle-after", idleAfter.String()}, Log: b.path("serve.log"),
		ReadyWithin: 5 * time.Minute}
	b.idleServeFirst(o, n)
	if *idleSave != "" {
		copyDB(db, *idleSave)
	}
	var heap, cpu *heapAsk
	switch {
	case *idleDump != "" && *idleServeProf != "":
		fail(fmt.Errorf("-idle-dump and -idle-serve-cpuprofile each take serve's standard input: give one"))
	case *idleDump != "":
		heap = b.heapServe(&o, filepath.Join(*idleDump, "serve.heap"))
	case *idleServeProf != "":
		cpu = b.cpuServe(&o, *idleServeProf)
	}
	srv, check := serveFor(o, heap, cpu)
	t0, ready, pid := srv.Started, srv.Ready, srv.PID()
	readyCPU, readyRSS := procCPU(pid), procRSSMB(pid)
	if cpu != nil {
		check(cpu.ask("cpu"))
	}
	saveSmaps(pid, "ready.smaps")

	signal := func(from, to int) float64 {
		var ds []float64
		for i := from; i < to; i++ {
			s := time.Now()
			_, err := srv.API.Signal(context.Background(), "o"+strconv.Itoa(i), "shipped", json.RawMessage(`"dhl"`))
			check(err)
			ds = append(ds, float64(time.Since(s))/float64(time.Millisecond))
		}
		return medianOf(ds)
	}
	duringRepair := signal(200, 400)
	signalsDone := time.Since(t0)

	var repaired time.Duration
	var peakAnon, peakFile float64 // the most of each seen while the repair ran, sampled every 20 ms
	for repaired == 0 {
		peakAnon = max(peakAnon, procStatusMB(pid, "RssAnon:"))
		peakFile = max(peakFile, procStatusMB(pid, "RssFile:"))
		if log, _ := os.ReadFile(o.Log); bytes.Contains(log, []byte("wend: checked the tasks of ")) {
			repaired = time.Since(t0)
			break
		}
		select {
		case <-srv.Exited():
			fail(fmt.Errorf("wend serve exited: %v\n%s", srv.Err(), srv.Tail()))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(t0) > 10*time.Minute {
			check(fmt.Errorf("the start's repair did not end in 10 minutes"))
		}
	}
	repairedRSS := procRSSMB(pid)
	saveSmaps(pid, "repaired.smaps")
	// The resident set split: anonymous (heap, stacks) and file-backed (bbolt's map of the file).
	repairedAnon, repairedFile := procStatusMB(pid, "RssAnon:"), procStatusMB(pid, "RssFile:")
	afterRepair := signal(400, 600)
	peak := procStatusMB(pid, "VmHWM:") // the rusage of a forked child counts the parent's pages before exec

	if heap != nil {
		check(heap.write())
	}
	_, err := srv.Stop()
	check(err)
	ps := srv.State()
	note := ""
	if signalsDone > repaired {
		note = "the signals sent right after ready outlasted the start's repair: signal_ms_median_during_repair is partly after it"
	}
	emit("idle_serve", "runs", n-200, "start_to_ready_ms", ms(ready), "cpu_ms_at_ready", ms(readyCPU), "rss_mb_at_ready", readyRSS,
		"start_to_repaired_ms", ms(repaired), "rss_mb_repaired", repairedRSS,
		"rss_anon_mb_repaired", repairedAnon, "rss_file_mb_repaired", repairedFile, "peak_rss_mb", peak,
		"rss_anon_mb_most_during_repair", peakAnon, "rss_file_mb_most_during_repair", peakFile,
		"signal_ms_median_during_repair", round(duringRepair), "signal_ms_median", round(afterRepair),
		"cpu_ms_total", ms(ps.UserTime()+ps.SystemTime()), "repair_log", repairLine(o.Log), "note", note)
}

// idleServeFirst is the first `wend serve` over the database the in-process parts left: no
// wend process counted those runs for the metrics, so before it is ready serve reads every
// run's history to catch the metrics' sum up (server/metrics, TimeCommits), once; its clean
// stop keeps the sum, as every wend process's does. Timed apart (exec to ready, CPU then), so
// that idleServe times a restart over a database as serve leaves it.
func (b *bench) idleServeFirst(o harness.Options, n int) {
	o.Log = b.path("serve-first.log")
	srv, err := harness.Start(o)
	if err != nil {
		fail(err)
	}
	atFail(srv.Kill)
	readyCPU, readyRSS, readyPeak := procCPU(srv.PID()), procRSSMB(srv.PID()), procStatusMB(srv.PID(), "VmHWM:")
	if _, err := srv.Stop(); err != nil {
		fail(fmt.Errorf("%v\n%s", err, srv.Tail()))
	}
	emit("idle_serve_first", "runs", n-200, "start_to_ready_ms", ms(srv.Ready), "cpu_ms_at_ready", ms(readyCPU),
		"rss_mb_at_ready", readyRSS, "peak_rss_mb_at_ready", readyPeak)
}

// repairLine is the serve log's line about the start's repair.
func repairLine(logPath string) string {
	log, _ := os.ReadFile(logPath)
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "wend: checked the tasks of ") {
			return l
		}
	}
	return ""
}

// procCPU is a process's CPU time so far (user and system), from /proc; 0 where it is missing.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ, 100 on Linux
}

// procRSSMB is a process's resident set now (VmRSS), in MB; -1 where /proc is missing.
func procRSSMB(pid int) float64 { return procStatusMB(pid, "VmRSS:") }

// procStatusMB reads one kB field of /proc/PID/status, in MB; -1 where it is missing.
func procStatusMB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return round(kb / 1024)
		}
	}
	return -1
}

// saveSmaps copies a process's /proc/PID/smaps (the resident set per mapping) to -idle-dump's
// directory, when it is set.
func saveSmaps(pid int, name string) {
	if *idleDump == "" {
		return
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err == nil {
		err = os.WriteFile(filepath.Join(*idleDump, name), b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: smaps:", err)
	}
}
