//go:build linux

package plugins

import (
	"context"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/proctest"
)

// restartCycles is 10 by default; WEND_SOAK=1 makes it 100 (docs/reliability.md P10, tier T2).
func restartCycles() int {
	if os.Getenv("WEND_SOAK") != "" {
		return 100
	}
	return 10
}

func openFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

// TestRestartLeaks: crash/restart cycles leave no goroutines, fds or zombies behind
// (docs/reliability.md P10).
func TestRestartLeaks(t *testing.T) {
	h, _ := newHost(t, Options{}, testPlugin("t", ""))
	ctx := context.Background()
	cycle := func() {
		if _, err := h.Execute(ctx, call("t", "noop", nil), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Execute(ctx, call("t", "crash", nil), nil); err == nil {
			t.Fatal("crash returned no error")
		}
	}
	cycle()
	cycle()
	// Measure in the same state as at the end: one live process, just called.
	if _, err := h.Execute(ctx, call("t", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	goroutines, fds := runtime.NumGoroutine(), openFDs()
	n := restartCycles()
	for range n {
		cycle()
	}
	if _, err := h.Execute(ctx, call("t", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	var dg, dfd int
	for range 50 { // goroutines of the last dead process wind down asynchronously
		dg, dfd = runtime.NumGoroutine()-goroutines, openFDs()-fds
		if dg <= 10 && dfd <= 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	zombies := proctest.ZombieChildren(os.Getpid())
	t.Logf("RELIABILITY suite=plugins test=P10 cycles=%d goroutines_delta=%d fds_delta=%d zombies=%d", n, dg, dfd, zombies)
	if dg > 10 || dfd > 0 || zombies > 0 {
		t.Fatalf("after %d restarts: goroutines %+d, fds %+d, zombies %d", n, dg, dfd, zombies)
	}
}

// TestStderrFlood: a plugin writing megabytes of 1 MiB stderr lines neither blocks the host nor
// loses its next call or a byte of its log (docs/reliability.md
// P11; scaled down from 50 MB to keep T1 fast).
func TestStderrFlood(t *testing.T) {
	const mb, linekb = 8, 1024
	const want = (mb << 20) / (linekb<<10 + 1) * (linekb << 10) // whole lines, newlines not logged
	var bytes atomic.Int64
	h, _ := newHost(t, Options{Log: func(_, line string) { bytes.Add(int64(len(line))) }}, testPlugin("t", ""))
	ctx, cancel := context.WithTimeout(context.Background(), slack(10*time.Second))
	defer cancel()
	start := time.Now()
	if _, err := h.Execute(ctx, call("t", "flood", map[string]int{"mb": mb, "linekb": linekb}), nil); err != nil {
		t.Fatal(err)
	}
	defer func() { t.Logf("flood of %d MiB took %s", mb, time.Since(start).Round(time.Millisecond)) }()
	if _, err := h.Execute(ctx, call("t", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(slack(5 * time.Second))
	for bytes.Load() < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := bytes.Load(); got < want {
		t.Fatalf("logged %d bytes, want %d", got, want)
	}
}
