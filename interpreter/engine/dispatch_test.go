package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
)

// openParked opens the engine as the CLI's wend signal / cancel / retry do: it holds calls.
func (h *harness) openParked() {
	h.e = New(Options{Store: h.store, Activities: parkedActs{}, Clock: h.clock, Logf: h.t.Logf, Parked: true})
	h.t.Cleanup(func() { h.e.Close() })
}

type parkedActs struct{}

func (parkedActs) Execute(ctx context.Context, _ history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (h *harness) task(id string) (history.Task, bool) {
	h.t.Helper()
	ts, err := h.store.Tasks()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, t := range ts {
		if t.ID == id {
			return t, true
		}
	}
	return history.Task{}, false
}

// blockFirst makes activity name hang on attempt 1 until its call is cancelled (and report
// the call on started); later attempts answer "ok".
func blockFirst(h *harness, name string) <-chan history.ActivityCall {
	started := make(chan history.ActivityCall, 1)
	h.acts.fns[name] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if c.Attempt > 1 {
			return json.RawMessage(`"ok"`), nil
		}
		started <- c
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return started
}

// TestRedeliveryGetsANewAttempt: a try handed to a plugin by a process that stopped
// before its outcome was recorded is recorded as interrupted and redelivered as attempt 2 with
// a new activity_attempt_id (it re-ran under the same attempt and id before), and the
// redelivery does not use up tries: the step has one try and still completes.
func TestRedeliveryGetsANewAttempt(t *testing.T) {
	h := newHarness(t)
	started := blockFirst(h, "slow")
	f := h.write("w.wend.yaml", head+"steps: [{id: s, activity: p.slow, retry: {tries: 1}}]\n")
	r := h.start(f, "w", "null")
	first := <-started
	if task, ok := h.task(interpreter.TaskID(first.ActivityExecutionID, 1)); !ok || !task.Dispatched {
		t.Fatalf("the try's task is not marked dispatched while its call runs: %+v %v", task, ok)
	}
	h.e.Close() // the process stops with the call in flight: no outcome is recorded
	delete(h.acts.fns, "slow")
	h.acts.fns["slow"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		return json.RawMessage(`"ok"`), nil
	}
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || rep.Interrupted != 1 {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	r = h.wait("w")
	if r.Status != history.StatusCompleted {
		t.Fatalf("run %s; a redelivery must not use up the step's one try", r.Status)
	}
	h.acts.mu.Lock()
	calls := append([]history.ActivityCall(nil), h.acts.calls...)
	h.acts.mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	a, b := calls[0], calls[1]
	if b.ActivityExecutionID != a.ActivityExecutionID || b.Attempt != 2 || b.ActivityAttemptID == a.ActivityAttemptID {
		t.Fatalf("redelivery %+v after %+v: want the same execution id, attempt 2, a new attempt id", b, a)
	}
	evs := events(h, r)
	if n := count(evs, history.ActivityAttemptInterrupted); n != 1 {
		t.Fatalf("%d interruptions recorded, want 1", n)
	}
	last := 0
	for _, ev := range evs {
		switch ev.Type {
		case history.ActivityAttemptInterrupted:
			if ev.Attempt != 1 {
				t.Fatalf("interruption of attempt %d, want 1", ev.Attempt)
			}
			ir, _ := history.DataOf[history.AttemptInterruption](ev)
			if ir.Reason != InterruptedReason {
				t.Fatalf("reason %q", ir.Reason)
			}
		case history.ActivityRetryScheduled:
			rs, _ := history.DataOf[history.RetrySchedule](ev)
			if !rs.Redelivery || rs.NextAttempt != 2 {
				t.Fatalf("retry after the interruption: %+v", rs)
			}
		case history.ActivityCompleted:
			if ev.Attempt != 2 {
				t.Fatalf("completed attempt %d, want 2", ev.Attempt)
			}
		}
		if ev.ActivityExecutionID != "" && ev.Type != history.ActivityRetryScheduled {
			if ev.Attempt < last {
				t.Fatalf("attempt %d after %d: attempt numbers must not go back", ev.Attempt, last)
			}
			last = ev.Attempt
		}
	}
}

// startFlakyRetry starts a run whose first try fails and whose second waits out a 1h backoff,
// and returns once the retry is scheduled.
func startFlakyRetry(h *harness) history.Run {
	h.acts.fns["flaky"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if c.Attempt == 1 {
			return nil, &history.ActivityError{Type: "Busy", Message: "later"}
		}
		return json.RawMessage(`"ok"`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{id: s, activity: p.flaky, retry: {tries: 2, backoff: [1h]}}]\n")
	r := h.start(f, "w", "null")
	for !h.hasEvent(r.RunID, history.ActivityRetryScheduled) {
		time.Sleep(time.Millisecond)
	}
	return r
}

// TestUndeliveredRetryIsNotARedelivery: a try waiting out its backoff when wend stopped was
// never delivered, whether the backoff ended while wend was down (due at recovery) or not
// (due after the restart): it runs as its own attempt and no interruption is recorded (only a
// try that may have been delivered is recorded interrupted).
func TestUndeliveredRetryIsNotARedelivery(t *testing.T) {
	for _, c := range []struct {
		name      string
		down, run time.Duration // clock moved while down, then after the restart
	}{
		{"backoff ends while down", 2 * time.Hour, 0},
		{"backoff ends after the restart", 0, time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			startFlakyRetry(h)
			h.e.Close()
			h.clock.Advance(c.down)
			h.open()
			rep, err := h.e.Recover(context.Background())
			if err != nil || rep.Interrupted != 0 {
				t.Fatalf("recover: %+v %v", rep, err)
			}
			h.clock.Advance(c.run)
			r := h.wait("w")
			if r.Status != history.StatusCompleted || h.acts.count("flaky") != 2 {
				t.Fatalf("%s after %d calls", r.Status, h.acts.count("flaky"))
			}
			if n := count(events(h, r), history.ActivityAttemptInterrupted); n != 0 {
				t.Fatalf("%d interruptions recorded for a try never delivered", n)
			}
		})
	}
}

// TestRetriedTryIsNotARedelivery: wend retry (a parked engine) makes a try due that no plugin
// has seen; the process that drives the run next delivers it as it is.
func TestRetriedTryIsNotARedelivery(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	fail := true
	h.acts.fns["charge"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return nil, &history.ActivityError{Type: "Down", Message: "bank down"}
		}
		return json.RawMessage(`"paid"`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{id: charge, activity: p.charge}]\n")
	h.start(f, "o", "null")
	if r := h.wait("o"); r.Status != history.StatusFailed {
		t.Fatalf("first run %s", r.Status)
	}
	h.e.Close()
	h.clock.Advance(time.Minute) // the retry run starts after the failed one
	h.openParked()
	rt, err := h.e.Retry(context.Background(), "o")
	if err != nil {
		t.Fatal(err)
	}
	h.e.Close()
	mu.Lock()
	fail = false
	mu.Unlock()
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || rep.Interrupted != 0 {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	r := h.wait("o")
	if r.RunID != rt.RunID || r.Status != history.StatusCompleted || h.acts.count("charge") != 2 {
		t.Fatalf("%s after %d calls", r.Status, h.acts.count("charge"))
	}
	if n := count(events(h, r), history.ActivityAttemptInterrupted); n != 0 {
		t.Fatalf("%d interruptions recorded for the retried try", n)
	}
}

// TestParkedEngineRecordsNoInterruption: wend signal / cancel replay runs through a parked
// engine; it neither marks the tries it parks nor records the interruption of a try a stopped
// process delivered: the next driving process records it, once.
func TestParkedEngineRecordsNoInterruption(t *testing.T) {
	h := newHarness(t)
	started := blockFirst(h, "slow")
	f := h.write("w.wend.yaml", head+"steps:\n  - {id: s, activity: p.slow}\n  - {id: sig, wait_for_signal: go}\n")
	r := h.start(f, "w", "null")
	first := <-started
	h.e.Close()
	id := interpreter.TaskID(first.ActivityExecutionID, 1)
	for i := 0; i < 2; i++ { // two signal commands in a row, as wend signal runs them
		h.openParked()
		if rep, err := h.e.Recover(context.Background()); err != nil || rep.Interrupted != 0 {
			t.Fatalf("parked recover: %+v %v", rep, err)
		}
		if err := h.e.Signal(context.Background(), "w", "go", nil); err != nil {
			t.Fatal(err)
		}
		h.e.Close()
		if task, ok := h.task(id); !ok || !task.Dispatched {
			t.Fatalf("the parked engine dropped the mark: %+v %v", task, ok)
		}
	}
	if n := count(events(h, r), history.ActivityAttemptInterrupted); n != 0 {
		t.Fatalf("a parked engine recorded %d interruptions", n)
	}
	h.open()
	if rep, err := h.e.Recover(context.Background()); err != nil || rep.Interrupted != 1 {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	if r = h.wait("w"); r.Status != history.StatusCompleted {
		t.Fatalf("run %s", r.Status)
	}
	if n := count(events(h, r), history.ActivityAttemptInterrupted); n != 1 {
		t.Fatalf("%d interruptions, want 1", n)
	}
}

// commitLog is a MemStore that records every commit.
type commitLog struct {
	*history.MemStore
	mu      sync.Mutex
	commits []history.Commit
}

func (l *commitLog) Commit(ctx context.Context, c history.Commit) error {
	if err := l.MemStore.Commit(ctx, c); err != nil {
		return err
	}
	l.mu.Lock()
	l.commits = append(l.commits, c)
	l.mu.Unlock()
	return nil
}

// TestEveryCallIsMarkedFirst: each try is marked dispatched in the store before its plugin
// sees it, on every path (due at once, waiting for a MaxActivities slot, after a backoff), and
// a step followed by a step costs no commit for it: the mark rides in the commit that
// schedules the try.
func TestEveryCallIsMarkedFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		slots int
		steps string
		calls int
	}{
		{"sequential", 0, "steps: [{id: a, activity: p.check}, {id: b, activity: p.check}, {id: c, activity: p.check}]\n", 3},
		{"waiting for a slot", 1, "steps: [{id: e, for_each: '${{ [1, 2, 3, 4] }}', steps: [{id: x, activity: p.check}]}]\n", 4},
		{"after a backoff", 0, "steps: [{id: r, activity: p.check, with: fail, retry: {tries: 3, backoff: [1s]}}]\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.e.Close()
			log := &commitLog{MemStore: history.NewMemStore()}
			h.store, h.slots = log.MemStore, tc.slots
			h.e = New(Options{Store: log, Activities: h.acts, Clock: h.clock, Logf: t.Logf, MaxActivities: h.slots})
			t.Cleanup(func() { h.e.Close() })
			var unmarked []string
			h.acts.fns["check"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
				id := interpreter.TaskID(c.ActivityExecutionID, c.Attempt)
				if task, ok := h.task(id); !ok || !task.Dispatched {
					h.acts.mu.Lock()
					unmarked = append(unmarked, id)
					h.acts.mu.Unlock()
				}
				if string(c.Input) == `"fail"` && c.Attempt < 3 {
					return nil, &history.ActivityError{Type: "Busy", Message: "later"}
				}
				return json.RawMessage(`1`), nil
			}
			f := h.write("w.wend.yaml", head+tc.steps)
			h.start(f, "w", "null")
			if r := h.wait("w"); r.Status != history.StatusCompleted {
				t.Fatalf("run %s", r.Status)
			}
			if n := h.acts.count("check"); n != tc.calls {
				t.Fatalf("%d calls, want %d", n, tc.calls)
			}
			h.acts.mu.Lock()
			defer h.acts.mu.Unlock()
			if len(unmarked) > 0 {
				t.Fatalf("called before their mark was stored: %v", unmarked)
			}
			if tc.name != "sequential" {
				return
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			for i, c := range log.commits {
				if len(c.Runs) == 0 {
					t.Fatalf("commit %d holds only marks %+v: the hot path must not pay a commit for them", i, c.PutTasks)
				}
			}
		})
	}
}

// TestLostTaskOfADispatchedTryIsARedelivery: a try in flight when the process
// stopped, whose task record was then lost, is rebuilt by the start's repair and recorded
// interrupted (its dispatch mark went with the record), so the re-run is attempt 2 with a
// new attempt id, not attempt 1 again.
func TestLostTaskOfADispatchedTryIsARedelivery(t *testing.T) {
	h := newHarness(t)
	started := blockFirst(h, "slow")
	f := h.write("w.wend.yaml", head+"steps: [{id: s, activity: p.slow, retry: {tries: 1}}]\n")
	h.start(f, "w", "null")
	first := <-started
	id := interpreter.TaskID(first.ActivityExecutionID, 1)
	h.e.Close()
	if err := h.store.Commit(context.Background(), history.Commit{DeleteTasks: []string{id}}); err != nil {
		t.Fatal(err)
	}
	delete(h.acts.fns, "slow")
	h.acts.fns["slow"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		return json.RawMessage(`"ok"`), nil
	}
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || len(rep.Repair.Rebuilt) != 1 || len(rep.Repair.Interrupted) != 1 || rep.Interrupted != 1 {
		t.Fatalf("recover: %+v %v; want the lost task rebuilt and its try interrupted", rep, err)
	}
	r := h.wait("w")
	if r.Status != history.StatusCompleted {
		t.Fatalf("run %s", r.Status)
	}
	h.acts.mu.Lock()
	calls := append([]history.ActivityCall(nil), h.acts.calls...)
	h.acts.mu.Unlock()
	if len(calls) != 2 || calls[1].Attempt != 2 || calls[1].ActivityAttemptID == calls[0].ActivityAttemptID {
		t.Fatalf("calls %+v: want the re-run as attempt 2 with a new attempt id", calls)
	}
	if n := count(events(h, r), history.ActivityAttemptInterrupted); n != 1 {
		t.Fatalf("%d interruptions recorded, want 1", n)
	}
}

// TestLostTaskOfAFutureRetryIsNotARedelivery: a lost task whose try was not yet due when the
// run last recorded an event (a backoff) cannot have reached a plugin: it is rebuilt as is.
func TestLostTaskOfAFutureRetryIsNotARedelivery(t *testing.T) {
	h := newHarness(t)
	r := startFlakyRetry(h)
	var id string
	ts, _ := h.store.Tasks()
	for _, task := range ts {
		if task.Kind == history.TaskActivity && task.RunID == r.RunID {
			id = task.ID
		}
	}
	if id == "" {
		t.Fatal("no retry task stored")
	}
	h.e.Close()
	if err := h.store.Commit(context.Background(), history.Commit{DeleteTasks: []string{id}}); err != nil {
		t.Fatal(err)
	}
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || len(rep.Repair.Rebuilt) != 1 || len(rep.Repair.Interrupted) != 0 {
		t.Fatalf("recover: %+v %v; want the retry's task rebuilt, no interruption", rep, err)
	}
	if task, ok := h.task(id); !ok || task.Dispatched {
		t.Fatalf("rebuilt task %+v %v: want it unmarked", task, ok)
	}
}

// TestHeldSlotsTakeAndRelease: a reserved slot is taken once, by its own task id, in any
// order; release gives back exactly the slots no call took; copies share the set.
func TestHeldSlotsTakeAndRelease(t *testing.T) {
	e := &Engine{sem: make(chan struct{}, 4)}
	var h heldSlots
	if h.take("a") {
		t.Fatal("an empty set gave a slot")
	}
	h.release(e) // nothing held: nothing given back
	for _, id := range []string{"a", "b", "c"} {
		e.sem <- struct{}{}
		h = h.add(id)
	}
	copied := h
	if !copied.take("b") || h.take("b") {
		t.Fatal("b: want taken once, through either copy")
	}
	if h.take("x") {
		t.Fatal("a slot for a task never reserved")
	}
	if !h.take("a") {
		t.Fatal("a: not taken")
	}
	h.release(e)
	if len(e.sem) != 2 { // b's and a's calls hold theirs; c's came back
		t.Fatalf("%d slots held after release, want 2", len(e.sem))
	}
	if h.take("c") {
		t.Fatal("c: taken after its slot was released")
	}
	h.release(e)
	if len(e.sem) != 2 {
		t.Fatalf("a second release gave back %d slots", 2-len(e.sem))
	}
}
