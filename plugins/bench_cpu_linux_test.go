package plugins

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFastLaneCPU: the CPU a call costs on each side, gRPC lane against fast lane: the
// Go example twice over, as in BenchmarkFastLane, called in blocks of b.N calls, the two
// processes' blocks in turn, 8 blocks each. The host's CPU is this process's (getrusage: the
// benchmark's loop and the runtime included, the same for both), the plugin's the sum of its
// threads' run time (/proc/PID/task/*/schedstat, in nanoseconds). Reported per call, medians
// over the blocks; fast/grpc compares host + plugin. gap-400µs sleeps before each call, as a
// step's call follows its commit, so each side's wake-up is in the figure; the host's CPU for
// the same sleeps without calls is taken off its figure.
//
//	go test -run '^$' -bench FastLaneCPU -benchtime 2000x ./plugins/
func BenchmarkFastLaneCPU(b *testing.B) {
	ctx := context.Background()
	h, cfgs, ps := laneHosts(b)
	pids := make([]int, len(ps))
	for i, p := range ps {
		var err error
		if pids[i], err = p.pid(); err != nil {
			b.Fatal(err)
		}
	}
	for _, gap := range []time.Duration{0, 400 * time.Microsecond} {
		b.Run("gap-"+gap.String(), func(b *testing.B) {
			host := make([][]time.Duration, len(cfgs)) // per call, one a block
			plugin := make([][]time.Duration, len(cfgs))
			wall := make([][]time.Duration, len(cfgs))
			block := func(i int, n int) (time.Duration, time.Duration) {
				start := time.Now()
				defer func() { wall[i] = append(wall[i], time.Since(start)/time.Duration(n)) }()
				h0, p0 := selfCPU(b), threadsCPU(b, pids[i])
				for range n {
					if gap > 0 {
						time.Sleep(gap)
					}
					if _, err := h.Execute(ctx, call(cfgs[i].Name, "echo", map[string]int{"i": 1}), nil); err != nil {
						b.Fatal(err)
					}
				}
				return (selfCPU(b) - h0) / time.Duration(n), (threadsCPU(b, pids[i]) - p0) / time.Duration(n)
			}
			// The host's CPU for the sleeps alone, measured the same way in each round and
			// taken off: Go's runtime spins on short timers, which is no call's cost.
			sleeps := func(n int) time.Duration {
				h0 := selfCPU(b)
				for range n {
					time.Sleep(gap)
				}
				return (selfCPU(b) - h0) / time.Duration(n)
			}
			for i := range cfgs { // warm up
				block(i, 200)
			}
			for range 8 {
				var idle time.Duration
				if gap > 0 {
					idle = sleeps(b.N)
				}
				for i := range cfgs {
					hc, pc := block(i, b.N)
					host[i] = append(host[i], hc-idle)
					plugin[i] = append(plugin[i], pc)
				}
			}
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
			for i, cfg := range cfgs {
				b.ReportMetric(us(median(host[i])), cfg.Name+"-host-cpu-µs/call")
				b.ReportMetric(us(median(plugin[i])), cfg.Name+"-plugin-cpu-µs/call")
				b.ReportMetric(us(median(wall[i])), cfg.Name+"-wall-µs/call")
			}
			g := median(host[0]) + median(plugin[0])
			f := median(host[1]) + median(plugin[1])
			b.ReportMetric(float64(f)/float64(g), "fast/grpc-cpu")
		})
	}
}

// selfCPU is this process's user and system time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadsCPU is the run time so far of process pid's live threads (schedstat's first field).
// A Go plugin's threads live as long as it does, so the sum does not lose an exited one.
func threadsCPU(b *testing.B, pid int) time.Duration {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended between the listing and the read
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			b.Fatalf("%s: %q", t.Name(), raw)
		}
		sum += time.Duration(ns)
	}
	return sum
}
