package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// newIdleHarness is newHarness with runs leaving memory after a minute idle.
func newIdleHarness(t *testing.T, opts Options) *harness {
	h := &harness{t: t, store: history.NewMemStore(), clock: NewFakeClock(t0), dir: t.TempDir(),
		acts: &fakeActs{fns: map[string]func(context.Context, history.ActivityCall) (json.RawMessage, error){}}}
	opts.Store, opts.Activities, opts.Clock, opts.Logf = h.store, h.acts, h.clock, t.Logf
	h.e = New(opts)
	t.Cleanup(func() { h.e.Close() })
	return h
}

// settle waits (in real time: the engine's goroutines run) until the run has recorded an event
// of type typ and has nothing in flight.
func (h *harness) settle(workflowID string, typ history.EventType) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		runs, _ := h.store.Runs(history.RunFilter{WorkflowID: workflowID})
		if len(runs) > 0 && h.hasEvent(runs[0].RunID, typ) {
			lr := h.e.live(runs[0].RunID)
			if lr == nil {
				return
			}
			lr.mu.Lock()
			idle := lr.interp == nil || h.e.evictable(lr)
			lr.mu.Unlock()
			if idle {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	h.t.Fatalf("%s never recorded %s and went idle", workflowID, typ)
}

// TestIdleRunLeavesMemoryAndResumes: runs idle for a while leave memory
// and are rebuilt from history on their next input. A run waiting on a signal, a timer, a
// retry's backoff or a cancel leaves memory after IdleAfter on the virtual clock, and its
// next input (from a client, or from the scheduler's heap) rebuilds it by replay and the run
// completes as it would have resident: completed steps are not called again and compensations
// still know what to undo.
func TestIdleRunLeavesMemoryAndResumes(t *testing.T) {
	cases := []struct {
		name   string
		wait   string // the waiting step
		waitOn history.EventType
		input  func(h *harness)
		status string
		output string
		calls  map[string]int
	}{
		{name: "signal", wait: "{id: w, wait_for_signal: go}", waitOn: history.ActivityCompleted,
			input: func(h *harness) {
				if err := h.e.Signal(context.Background(), "r", "go", json.RawMessage(`{"by":"ann"}`)); err != nil {
					h.t.Fatal(err)
				}
			},
			status: history.StatusCompleted, output: `{"a":1,"w":{"by":"ann"}}`, calls: map[string]int{"first": 1, "after": 1, "undo": 0}},
		{name: "timer", wait: "{id: w, delay: 1h}", waitOn: history.TimerScheduled,
			input:  func(h *harness) { h.clock.Advance(time.Hour) },
			status: history.StatusCompleted, output: `{"a":1,"w":null}`, calls: map[string]int{"first": 1, "after": 1, "undo": 0}},
		{name: "retry backoff", wait: "{id: w, activity: p.flaky, retry: {tries: 2, backoff: [1h]}}", waitOn: history.ActivityRetryScheduled,
			input:  func(h *harness) { h.clock.Advance(time.Hour) },
			status: history.StatusCompleted, output: `{"a":1,"w":"ok"}`, calls: map[string]int{"first": 1, "flaky": 2, "after": 1}},
		{name: "cancel", wait: "{id: w, wait_for_signal: go}", waitOn: history.ActivityCompleted,
			input: func(h *harness) {
				if err := h.e.Cancel(context.Background(), "r", "no longer needed"); err != nil {
					h.t.Fatal(err)
				}
			},
			status: history.StatusCancelled, calls: map[string]int{"first": 1, "after": 0, "undo": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newIdleHarness(t, Options{IdleAfter: time.Minute})
			h.acts.fns["flaky"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
				if c.Attempt == 1 {
					return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
				}
				return json.RawMessage(`"ok"`), nil
			}
			f := h.write("w.wend.yaml", head+"steps:\n  - {id: a, activity: p.first, with: 1, compensate_with: {activity: p.undo}}\n  - "+
				tc.wait+"\n  - {activity: p.after}\noutput: {a: \"${{ steps.a.output }}\", w: \"${{ steps.w.output }}\"}\n")
			h.start(f, "r", "null")
			h.settle("r", tc.waitOn)
			h.clock.Advance(2 * time.Minute) // the sweep runs on the virtual clock
			if s := h.e.Idle(); s.Resident != 0 || s.Evicted != 1 || s.Open != 1 {
				t.Fatalf("after 2 idle minutes: %+v, want the run out of memory", s)
			}
			tc.input(h)
			r := h.wait("r")
			if r.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", r.Status, h.output(r), tc.status)
			}
			if tc.output != "" && h.output(r) != tc.output {
				t.Fatalf("output %s, want %s", h.output(r), tc.output)
			}
			if s := h.e.Idle(); s.Rebuilt != 1 {
				t.Fatalf("rebuilt %d times, want once: %+v", s.Rebuilt, s)
			}
			for act, n := range tc.calls {
				if got := h.acts.count(act); got != n {
					t.Fatalf("%s called %d times, want %d", act, got, n)
				}
			}
		})
	}
}

// TestIdleRunsBoundedByMaxResident: with MaxResidentRuns alone, the runs idle longest leave
// until the bound holds, and each still takes its signal.
func TestIdleRunsBoundedByMaxResident(t *testing.T) {
	h := newIdleHarness(t, Options{MaxResidentRuns: 3})
	f := h.write("w.wend.yaml", head+"steps: [{id: w, wait_for_signal: go}]\noutput: \"${{ steps.w.output }}\"\n")
	for i := range 10 {
		h.start(f, fmt.Sprint("r", i), "null")
		h.clock.Advance(time.Millisecond) // distinct last-use times
	}
	h.clock.Advance(time.Second)
	if s := h.e.Idle(); s.Resident != 3 || s.Open != 10 {
		t.Fatalf("%+v, want 3 of 10 resident", s)
	}
	for i := range 10 {
		if err := h.e.Signal(context.Background(), fmt.Sprint("r", i), "go", json.RawMessage(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if r := h.wait(fmt.Sprint("r", i)); h.output(r) != fmt.Sprint(i) {
			t.Fatalf("r%d: %s", i, h.output(r))
		}
	}
	if s := h.e.Idle(); s.Rebuilt != 7 {
		t.Fatalf("%+v, want the 7 evicted runs rebuilt", s)
	}
}

// TestResidentBoundDefaults: an engine that lets idle runs leave memory bounds the runs it holds
// by default; one that keeps them all, or is told no bound, does not.
func TestResidentBoundDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want int
	}{
		{"runs stay in memory", Options{}, 0},
		{"idle runs leave", Options{IdleAfter: time.Minute}, DefaultMaxResidentRuns},
		{"a bound of its own", Options{IdleAfter: time.Minute, MaxResidentRuns: 50}, 50},
		{"no bound asked for", Options{IdleAfter: time.Minute, MaxResidentRuns: -1}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newIdleHarness(t, tc.opts)
			if got := h.e.opts.MaxResidentRuns; got != tc.want {
				t.Fatalf("MaxResidentRuns %d, want %d", got, tc.want)
			}
		})
	}
}

// TestResidentBoundHoldsWithinASecond: with a long IdleAfter and a resident bound, a burst of
// runs past the bound is cut back at the next second's sweep, not after IdleAfter's quarter.
func TestResidentBoundHoldsWithinASecond(t *testing.T) {
	h := newIdleHarness(t, Options{IdleAfter: time.Hour, MaxResidentRuns: 3})
	f := h.write("w.wend.yaml", head+"steps: [{id: w, wait_for_signal: go}]\noutput: \"${{ steps.w.output }}\"\n")
	for i := range 8 {
		h.start(f, fmt.Sprint("r", i), "null")
		h.clock.Advance(time.Millisecond) // distinct last-use times
	}
	h.clock.Advance(time.Second)
	if s := h.e.Idle(); s.Resident != 3 || s.Open != 8 {
		t.Fatalf("%+v, want 3 of 8 resident a second after the burst", s)
	}
	if err := h.e.Signal(context.Background(), "r0", "go", json.RawMessage(`"first"`)); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("r0"); h.output(r) != `"first"` {
		t.Fatalf("r0, evicted first: %s", h.output(r))
	}
}

// TestEvictedRunThatNoLongerReplaysIsBlocked: a history that no longer replays (here its
// record was rewritten behind the engine's back) blocks the run on its next input, as at
// Recover, and the input is refused with ErrBlocked, never applied to a guess.
func TestEvictedRunThatNoLongerReplaysIsBlocked(t *testing.T) {
	h := newIdleHarness(t, Options{IdleAfter: time.Minute})
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	r := h.start(f, "r", "null")
	h.clock.Advance(2 * time.Minute)
	if s := h.e.Idle(); s.Resident != 0 {
		t.Fatalf("%+v", s)
	}
	lr := h.e.live(r.RunID)
	lr.mu.Lock()
	lr.rec.LastSeq++ // the engine's record says one event more than the history holds
	lr.mu.Unlock()
	err := h.e.Signal(context.Background(), "r", "go", nil)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("signal: %v, want ErrBlocked", err)
	}
	if h.hasEvent(r.RunID, history.SignalReceived) {
		t.Fatal("the signal was recorded in a history the engine could not replay")
	}
}

// TestRepairSkipsEvictedRunsWithTheirTasks: the watchdog's repair does not rebuild an evicted
// run whose tasks are all stored, and rebuilds (and repairs) one whose timer task was lost.
func TestRepairSkipsEvictedRunsWithTheirTasks(t *testing.T) {
	h := newIdleHarness(t, Options{IdleAfter: time.Minute})
	f := h.write("w.wend.yaml", head+"steps: [{delay: 1h}]\n")
	h.start(f, "kept", "null")
	lost := h.start(f, "lost", "null")
	h.clock.Advance(2 * time.Minute)
	if err := h.store.Commit(context.Background(), history.Commit{DeleteTasks: []string{timerTaskID(lost.RunID, "steps[0]")}}); err != nil {
		t.Fatal(err)
	}
	rep, err := h.e.Repair(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rebuilt) != 1 || !strings.HasPrefix(rep.Rebuilt[0], lost.RunID) {
		t.Fatalf("rebuilt %v, want the lost run's timer", rep.Rebuilt)
	}
	if s := h.e.Idle(); s.Rebuilt != 1 || s.Resident != 1 {
		t.Fatalf("%+v: want only the run that lost its task replayed", s)
	}
	h.clock.Advance(time.Hour)
	for _, id := range []string{"kept", "lost"} {
		if r := h.wait(id); r.Status != history.StatusCompleted {
			t.Fatalf("%s: %s", id, r.Status)
		}
	}
}

// TestWaitingRunMemoryBounded bounds the live heap an evicted waiting run costs (the
// target is 100,000 waiting runs in under 1 GB): n runs wait on a signal, leave memory, and
// the heap they hold, engine and in-memory store together, is measured after a GC, and
// against what they held resident.
func TestWaitingRunMemoryBounded(t *testing.T) {
	const n = 2000
	h := newIdleHarness(t, Options{IdleAfter: time.Minute})
	f := h.write("w.wend.yaml", head+`
steps:
  - {id: a, activity: p.first, with: {order: "${{ input.order }}"}}
  - {id: shipped, wait_for_signal: shipped, timeout: 72h}
  - {activity: p.after, with: "${{ steps.shipped.output }}"}
output: "${{ steps.shipped.output }}"
`)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range n {
		h.start(f, fmt.Sprint("o", i), fmt.Sprintf(`{"order": %d}`, i))
	}
	for i := range n {
		h.settle(fmt.Sprint("o", i), history.TimerScheduled)
	}
	resident := heap()
	h.clock.Advance(2 * time.Minute)
	if s := h.e.Idle(); s.Resident != 0 || s.Open != n {
		t.Fatalf("%+v", s)
	}
	evicted := heap()
	perResident := float64(resident-before) / n
	perEvicted := float64(evicted-before) / n
	t.Logf("live heap per waiting run: %.0f B resident, %.0f B evicted (engine and MemStore)", perResident, perEvicted)
	const bound = 6 << 10 // the run record, its map entries, its timer in the heap, and MemStore's copy of its history
	if perEvicted > bound {
		t.Fatalf("an evicted waiting run holds %.0f B of heap, over %d", perEvicted, bound)
	}
	// What eviction frees is the state machine: more than 1 KB, but a waiting one is small
	// (its node tree, its timer and its waiter: no map of its own).
	if freed := perResident - perEvicted; freed < 1<<10 || freed > 3<<10 {
		t.Fatalf("resident %.0f B a run against %.0f B evicted: eviction frees %.0f B, want 1-3 KB", perResident, perEvicted, freed)
	}
	if err := h.e.Signal(context.Background(), "o7", "shipped", json.RawMessage(`"dhl"`)); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("o7"); h.output(r) != `"dhl"` {
		t.Fatalf("o7: %s", h.output(r))
	}
}

// BenchmarkRebuildEvictedRun prices what a signal to an evicted run adds: reading its history
// and replaying it, with the parsed spec shared among runs (the engine's way) and parsed anew
// for each rebuild.
func BenchmarkRebuildEvictedRun(b *testing.B) {
	store := history.NewMemStore()
	e := New(Options{Store: store, Activities: &fakeActs{}, Clock: NewFakeClock(t0), IdleAfter: time.Minute})
	defer e.Close()
	f := filepath.Join(b.TempDir(), "w.wend.yaml")
	src := []byte(head + `
steps:
  - {id: a, activity: p.first, with: {order: "${{ input.order }}"}}
  - {id: shipped, wait_for_signal: shipped, timeout: 72h}
  - {activity: p.after, with: "${{ steps.shipped.output }}"}
`)
	r, _, err := e.Start(context.Background(), StartRequest{WorkflowID: "o", SpecFile: f, Source: string(src), Input: json.RawMessage(`{"order": 1}`)})
	if err != nil {
		b.Fatal(err)
	}
	for !hasType(store, r.RunID, history.TimerScheduled) {
		time.Sleep(time.Millisecond) // the first activity's outcome is being committed
	}
	lr := e.live(r.RunID)
	b.Run("shared spec", func(b *testing.B) {
		for b.Loop() {
			lr.mu.Lock()
			e.evict(lr)
			if err := e.ensure(lr); err != nil {
				b.Fatal(err)
			}
			lr.mu.Unlock()
		}
	})
	b.Run("spec parsed each time", func(b *testing.B) {
		for b.Loop() {
			evs, _ := store.Events(r.RunID, 0)
			st, _ := history.DataOf[history.Started](evs[0])
			if _, err := replayRun(st, evs, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func hasType(store history.Store, runID string, typ history.EventType) bool {
	evs, _ := store.Events(runID, 0)
	for _, ev := range evs {
		if ev.Type == typ {
			return true
		}
	}
	return false
}

// TestSignalContractHoldsForAnEvictedRun: the workflow's `signals:` contract is checked
// against the spec of a run out of memory too (the spec is rebuilt for the check), so an
// undeclared signal is refused and nothing is recorded, where a nil spec would let it through.
func TestSignalContractHoldsForAnEvictedRun(t *testing.T) {
	h := newIdleHarness(t, Options{IdleAfter: time.Minute})
	f := h.write("w.wend.yaml", head+"signals: {go: {}}\nsteps: [{id: w, wait_for_signal: go}]\noutput: \"${{ steps.w.output }}\"\n")
	r := h.start(f, "r", "null")
	h.clock.Advance(2 * time.Minute)
	if s := h.e.Idle(); s.Resident != 0 {
		t.Fatalf("%+v", s)
	}
	if err := h.e.Signal(context.Background(), "r", "stop", nil); !errors.Is(err, spec.ErrUndeclaredSignal) {
		t.Fatalf("undeclared signal to an evicted run: %v, want ErrUndeclaredSignal", err)
	}
	if h.hasEvent(r.RunID, history.SignalReceived) {
		t.Fatal("the undeclared signal was recorded")
	}
	if err := h.e.Signal(context.Background(), "r", "go", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("r"); h.output(r) != "1" {
		t.Fatalf("output %s", h.output(r))
	}
}

// TestRecoverLeavesWaitingRunsOutOfMemory: an engine that lets idle runs go drops each waiting
// run as soon as Recover has replayed it (a restart over 100,000 waiting runs must not hold them
// all), keeps a run with a due try in memory, and every one of them still takes its input.
func TestRecoverLeavesWaitingRunsOutOfMemory(t *testing.T) {
	h := newIdleHarness(t, Options{})
	f := h.write("w.wend.yaml", head+"steps:\n  - {activity: p.first}\n  - {id: w, wait_for_signal: go, timeout: 1h}\noutput: \"${{ steps.w.output }}\"\n")
	d := h.write("d.wend.yaml", head+"steps: [{activity: p.first}, {delay: 10m}]\n")
	h.start(f, "sig", "null")
	h.start(d, "timer", "null")
	h.settle("sig", history.TimerScheduled)
	h.settle("timer", history.TimerScheduled)
	held := make(chan struct{})
	h.acts.fns["slow"] = func(ctx context.Context, _ history.ActivityCall) (json.RawMessage, error) {
		select {
		case <-held:
			return json.RawMessage(`1`), nil
		case <-ctx.Done(): // the first engine closing: the try is redelivered after Recover
			return nil, ctx.Err()
		}
	}
	s := h.write("s.wend.yaml", head+"steps: [{activity: p.slow}]\n")
	h.start(s, "busy", "null")
	h.e.Close()
	close(held)

	h.e = New(Options{Store: h.store, Activities: h.acts, Clock: h.clock, Logf: t.Logf, IdleAfter: time.Hour})
	t.Cleanup(func() { h.e.Close() })
	rep, err := h.e.Recover(context.Background())
	if err != nil || rep.Resumed != 3 {
		t.Fatalf("recover: %+v, %v", rep, err)
	}
	if st := h.e.Idle(); st.Evicted != 2 {
		t.Fatalf("%+v: want the two waiting runs out of memory and the busy one in", st)
	}
	if r := h.wait("busy"); r.Status != history.StatusCompleted {
		t.Fatalf("busy: %s", r.Status)
	}
	if err := h.e.Signal(context.Background(), "sig", "go", json.RawMessage(`"ok"`)); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("sig"); h.output(r) != `"ok"` {
		t.Fatalf("sig: %s", h.output(r))
	}
	h.clock.Advance(10 * time.Minute)
	if r := h.wait("timer"); r.Status != history.StatusCompleted {
		t.Fatalf("timer: %s", r.Status)
	}
	if h.acts.count("first") != 2 {
		t.Fatalf("first called %d times, want once a run", h.acts.count("first"))
	}
}
