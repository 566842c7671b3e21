package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// gate makes an activity that blocks until release is closed (or its call is cancelled).
func gate(release chan struct{}) func(context.Context, history.ActivityCall) (json.RawMessage, error) {
	return func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		select {
		case <-release:
			return json.RawMessage(`"ok"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// firstAttempts fails the test unless every completed try of the run was its first: waiting
// on a limit is not a try.
func firstAttempts(t *testing.T, h *harness, r history.Run) {
	t.Helper()
	evs, _ := h.store.Events(r.RunID, 0)
	if r.Status != history.StatusCompleted {
		for _, ev := range evs {
			t.Logf("%s %s attempt %d %s", ev.Type, ev.Step, ev.Attempt, ev.Data)
		}
		t.Fatalf("run %s: %s", r.WorkflowID, r.Status)
	}
	for _, ev := range evs {
		if ev.Type == history.ActivityCompleted && ev.Attempt != 1 {
			t.Fatalf("run %s: %s completed on attempt %d", r.WorkflowID, ev.Step, ev.Attempt)
		}
		if ev.Type == history.ActivityTimedOut || ev.Type == history.ActivityAttemptInterrupted {
			t.Fatalf("run %s: %s", r.WorkflowID, ev.Type)
		}
	}
}

// waitStill waits for the run of id to close without moving the fake clock (h.wait moves it,
// which would time out tries whose timeouts the test counts on).
func waitStill(t *testing.T, h *harness, id string) history.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := h.e.WaitClosed(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return r
}

// A concurrency limit holds the tries over it before they start: no call, no slot of
// MaxActivities taken (an unlimited activity runs meanwhile), no timeout running; they start
// as tries end.
func TestLimitConcurrency(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	h.acts.fns["gate"] = gate(release)
	f := h.write("w.wend.yaml", head+"limits: {p.gate: {concurrency: 2}}\nsteps: [{id: g, activity: p.gate, timeout: 10s}]\n")
	free := h.write("free.wend.yaml", head+"steps: [{id: e, activity: p.echo, with: 1}]\n")
	for i := range 5 {
		h.start(f, fmt.Sprint("w", i), "null")
	}
	want := LimitStats{Running: 2, Waiting: 3}
	waitFor(t, fmt.Sprintf("limit stats %+v", want), func() bool { return h.e.LimitStats()["p.gate"] == want })
	waitFor(t, "the admitted tries called", func() bool { return h.acts.count("gate") == 2 })
	if cs := h.e.CallStats(); cs.Running != 2 || cs.WaitingSlot != 0 {
		t.Fatalf("call stats %+v: tries waiting on a limit must hold no slot", cs)
	}
	h.start(free, "free", "null")
	firstAttempts(t, h, waitStill(t, h, "free"))
	if n := h.acts.count("gate"); n != 2 {
		t.Fatalf("%d calls made, want 2: a try over the limit must not start", n)
	}
	started := map[string]bool{}
	h.acts.mu.Lock()
	for _, c := range h.acts.calls {
		started[c.WorkflowID] = true
	}
	h.acts.mu.Unlock()
	// Past the running tries' 10s timeout (they time out), not past that of a try admitted at
	// their end: the waiting tries' timeouts were not running while they waited.
	h.clock.Advance(11 * time.Second)
	close(release)
	for i := range 5 {
		id := fmt.Sprint("w", i)
		r := waitStill(t, h, id)
		if !started[id] {
			firstAttempts(t, h, r)
		} else if r.Status != history.StatusFailed {
			t.Fatalf("run %s, started before the clock moved 11s, is %s; want failed (timed out)", id, r.Status)
		}
	}
	if got := h.e.LimitStats()["p.gate"]; got != (LimitStats{}) {
		t.Fatalf("limit stats after the runs %+v", got)
	}
}

// A rate admits N starts per period: the rest wait until the oldest start leaves the window.
func TestLimitRate(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"limits: {p.echo: {rate: 2/m}}\nsteps: [{id: e, activity: p.echo, with: 1}]\n")
	for i := range 5 {
		h.start(f, fmt.Sprint("w", i), "null")
	}
	for _, want := range []int{2, 4, 5} {
		waitFor(t, fmt.Sprintf("%d calls", want), func() bool { return h.acts.count("echo") == want })
		waitFor(t, fmt.Sprintf("%d waiting", 5-want), func() bool { return h.e.LimitStats()["p.echo"].Waiting == 5-want })
		h.clock.Advance(59 * time.Second)
		time.Sleep(20 * time.Millisecond) // a wrongly admitted try would be called by now
		if n := h.acts.count("echo"); n != want {
			t.Fatalf("%d calls within the minute, want %d", n, want)
		}
		h.clock.Advance(time.Second)
	}
	for i := range 5 {
		firstAttempts(t, h, h.wait(fmt.Sprint("w", i)))
	}
}

// A cancelled run's try that waits on a limit leaves the queue without a call.
func TestLimitWaiterCancelled(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	h.acts.fns["gate"] = gate(release)
	f := h.write("w.wend.yaml", head+"limits: {p.gate: {concurrency: 1}}\nsteps: [{id: g, activity: p.gate}]\n")
	h.start(f, "a", "null")
	h.start(f, "b", "null")
	want := LimitStats{Running: 1, Waiting: 1}
	waitFor(t, "one running, one waiting", func() bool { return h.e.LimitStats()["p.gate"] == want })
	waitFor(t, "the first call", func() bool { return h.acts.count("gate") == 1 })
	h.acts.mu.Lock()
	running, waiting := h.acts.calls[0].WorkflowID, "a"
	h.acts.mu.Unlock()
	if running == "a" {
		waiting = "b"
	}
	if err := h.e.Cancel(context.Background(), waiting, "ops"); err != nil {
		t.Fatal(err)
	}
	if r := h.wait(waiting); r.Status != history.StatusCancelled {
		t.Fatalf("%s %s", waiting, r.Status)
	}
	waitFor(t, "the waiter gone", func() bool { return h.e.LimitStats()["p.gate"].Waiting == 0 })
	close(release)
	firstAttempts(t, h, h.wait(running))
	if n := h.acts.count("gate"); n != 1 {
		t.Fatalf("%d calls, want 1: the cancelled waiter must not be called: %+v", n, h.acts.calls)
	}
}

// slowStart plays a plugin whose process takes until up is closed to start: every try's
// Prepare waits for it. Execute notes, on the engine's clock, when each call reached it.
type slowStart struct {
	*fakeActs
	up    chan struct{}
	clock Clock
	mu    sync.Mutex
	at    []time.Time
}

func (s *slowStart) Prepare(ctx context.Context, c history.ActivityCall) error {
	select {
	case <-s.up:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *slowStart) Execute(ctx context.Context, c history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	s.mu.Lock()
	s.at = append(s.at, s.clock.Now())
	s.mu.Unlock()
	return s.fakeActs.Execute(ctx, c, hb)
}

func (s *slowStart) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at)
}

// A rate counts a try when its call reaches the plugin, not when the limit admits it: on a
// plugin still starting, the tries admitted meanwhile wait for it and still reach it no faster
// than the rate, however long the start takes.
func TestLimitRateCountsCallsAtThePlugin(t *testing.T) {
	for _, startup := range []time.Duration{0, 500 * time.Millisecond, 2500 * time.Millisecond} {
		t.Run(startup.String(), func(t *testing.T) {
			h := newHarness(t)
			h.e.Close()
			slow := &slowStart{fakeActs: h.acts, up: make(chan struct{}), clock: h.clock}
			h.e = New(Options{Store: h.store, Activities: slow, Clock: h.clock, Logf: t.Logf})
			t.Cleanup(func() { h.e.Close() })
			f := h.write("w.wend.yaml", head+"limits: {p.echo: {rate: 5/s}}\nsteps: [{id: e, activity: p.echo, with: 1}]\n")
			for i := range 10 {
				h.start(f, fmt.Sprint("w", i), "null")
			}
			waitFor(t, "five tries admitted, five waiting", func() bool {
				return h.e.LimitStats()["p.echo"] == LimitStats{Running: 5, Waiting: 5}
			})
			h.clock.Advance(startup) // the plugin starts meanwhile
			time.Sleep(20 * time.Millisecond)
			if got := h.e.LimitStats()["p.echo"]; got != (LimitStats{Running: 5, Waiting: 5}) {
				t.Fatalf("limit stats %+v while the plugin starts: a try admitted before its plugin is up must count", got)
			}
			close(slow.up)
			waitFor(t, "five calls", func() bool { return slow.calls() == 5 })
			h.clock.Advance(999 * time.Millisecond)
			time.Sleep(20 * time.Millisecond) // a wrongly admitted try would be called by now
			if n := slow.calls(); n != 5 {
				t.Fatalf("%d calls within a second of the plugin's start, want 5", n)
			}
			h.clock.Advance(time.Millisecond)
			waitFor(t, "ten calls", func() bool { return slow.calls() == 10 })
			for i := range 10 {
				firstAttempts(t, h, waitStill(t, h, fmt.Sprint("w", i)))
			}
			slow.mu.Lock()
			defer slow.mu.Unlock()
			for i := 5; i < len(slow.at); i++ {
				if d := slow.at[i].Sub(slow.at[i-5]); d < time.Second {
					t.Fatalf("calls %d and %d reached the plugin %s apart: six calls in one second", i-5, i, d)
				}
			}
		})
	}
}
