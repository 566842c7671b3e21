package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wendflow/wend/internal/apiclient"
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
	if n < 600 {
		return // its signals go to runs o200..o599, which the earlier parts left waiting
	}
	dir := filepath.Dir(db)
	wend := b.path("wend")
	goBuild(wend, "github.com/wendflow/wend/cmd/wend")
	goBuild(filepath.Join(dir, "p"), "github.com/wendflow/wend/examples/plugins/go") // the order flow's ./p
	logPath := b.path("serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		fail(err)
	}
	defer logf.Close()
	api := apiclient.Unix(db + ".sock")
	cmd := exec.Command(wend, "serve", "--db", db, "--http", "off", "--idle-after", idleAfter.String())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if *idleDump != "" {
		cmd.Env = append(os.Environ(), "WEND_HEAPPROFILE="+filepath.Join(*idleDump, "serve.heap"))
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	atFail(stop)
	check := func(err error) {
		if err != nil {
			stop()
			fail(fmt.Errorf("%v\n%s", err, tail(logPath)))
		}
	}

	var ready time.Duration
	for {
		var h struct {
			Status string `json:"status"`
			Engine bool   `json:"engine"`
		}
		if err := api.Call(context.Background(), "GET", "/v1/health", nil, http.StatusOK, &h); err == nil && h.Status == "ok" && h.Engine {
			ready = time.Since(t0)
			break
		}
		select {
		case err := <-exited:
			fail(fmt.Errorf("wend serve exited before it was ready: %v\n%s", err, tail(logPath)))
		case <-time.After(2 * time.Millisecond):
		}
		if time.Since(t0) > 5*time.Minute {
			check(fmt.Errorf("wend serve not ready after 5 minutes"))
		}
	}
	readyCPU, readyRSS := procCPU(cmd.Process.Pid), procRSSMB(cmd.Process.Pid)
	saveSmaps(cmd.Process.Pid, "ready.smaps")

	signal := func(from, to int) float64 {
		var ds []float64
		for i := from; i < to; i++ {
			s := time.Now()
			check(api.Call(context.Background(), "POST", "/v1/runs/o"+strconv.Itoa(i)+"/signals", map[string]any{"name": "shipped", "data": "dhl"}, http.StatusOK, nil))
			ds = append(ds, float64(time.Since(s))/float64(time.Millisecond))
		}
		return medianOf(ds)
	}
	duringRepair := signal(200, 400)
	signalsDone := time.Since(t0)

	var repaired time.Duration
	var peakAnon, peakFile float64 // the most of each seen while the repair ran, sampled every 20 ms
	for repaired == 0 {
		peakAnon = max(peakAnon, procStatusMB(cmd.Process.Pid, "RssAnon:"))
		peakFile = max(peakFile, procStatusMB(cmd.Process.Pid, "RssFile:"))
		if log, _ := os.ReadFile(logPath); bytes.Contains(log, []byte("wend: checked the tasks of ")) {
			repaired = time.Since(t0)
			break
		}
		select {
		case err := <-exited:
			fail(fmt.Errorf("wend serve exited: %v\n%s", err, tail(logPath)))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(t0) > 10*time.Minute {
			check(fmt.Errorf("the start's repair did not end in 10 minutes"))
		}
	}
	repairedRSS := procRSSMB(cmd.Process.Pid)
	saveSmaps(cmd.Process.Pid, "repaired.smaps")
	// The resident set split: anonymous (heap, stacks) and file-backed (bbolt's map of the file).
	repairedAnon, repairedFile := procStatusMB(cmd.Process.Pid, "RssAnon:"), procStatusMB(cmd.Process.Pid, "RssFile:")
	afterRepair := signal(400, 600)
	peak := procStatusMB(cmd.Process.Pid, "VmHWM:") // the rusage of a forked child counts the parent's pages before exec

	api.Close()
	check(cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		if err != nil {
			fail(fmt.Errorf("wend serve exited after SIGTERM: %v\n%s", err, tail(logPath)))
		}
	case <-time.After(time.Minute):
		check(fmt.Errorf("wend serve still running a minute after SIGTERM"))
	}
	ps := cmd.ProcessState
	note := ""
	if signalsDone > repaired {
		note = "the signals sent right after ready outlasted the start's repair: signal_ms_median_during_repair is partly after it"
	}
	emit("idle_serve", "runs", n-200, "start_to_ready_ms", ms(ready), "cpu_ms_at_ready", ms(readyCPU), "rss_mb_at_ready", readyRSS,
		"start_to_repaired_ms", ms(repaired), "rss_mb_repaired", repairedRSS,
		"rss_anon_mb_repaired", repairedAnon, "rss_file_mb_repaired", repairedFile, "peak_rss_mb", peak,
		"rss_anon_mb_most_during_repair", peakAnon, "rss_file_mb_most_during_repair", peakFile,
		"signal_ms_median_during_repair", round(duringRepair), "signal_ms_median", round(afterRepair),
		"cpu_ms_total", ms(ps.UserTime()+ps.SystemTime()), "repair_log", repairLine(logPath), "note", note)
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
