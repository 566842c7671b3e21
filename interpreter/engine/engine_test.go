package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

var t0 = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

// fakeActs plays the plugins in-process: each activity name maps to a function.
type fakeActs struct {
	mu    sync.Mutex
	calls []history.ActivityCall
	fns   map[string]func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error)
}

func (f *fakeActs) Execute(ctx context.Context, c history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	fn := f.fns[c.Activity]
	f.mu.Unlock()
	if fn == nil {
		return c.Input, nil // echo
	}
	return fn(context.WithValue(ctx, hbKey{}, hb), c)
}

func (f *fakeActs) count(activity string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.Activity == activity {
			n++
		}
	}
	return n
}

type harness struct {
	t     *testing.T
	store *history.MemStore
	clock *FakeClock
	acts  *fakeActs
	e     *Engine
	dir   string
	slots int // MaxActivities; 0 is the default
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, store: history.NewMemStore(), clock: NewFakeClock(t0), dir: t.TempDir(),
		acts: &fakeActs{fns: map[string]func(context.Context, history.ActivityCall) (json.RawMessage, error){}}}
	h.open()
	return h
}

func (h *harness) open() {
	h.e = New(Options{Store: h.store, Activities: h.acts, Clock: h.clock, Logf: h.t.Logf, MaxActivities: h.slots})
	h.t.Cleanup(func() { h.e.Close() })
}

func (h *harness) write(name, src string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) start(file, id, input string) history.Run {
	h.t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		h.t.Fatal(err)
	}
	r, _, err := h.e.Start(context.Background(), StartRequest{WorkflowID: id, SpecFile: file, Source: string(src), Input: json.RawMessage(input)})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// wait blocks until the workflow closes, advancing virtual time in steps so timers fire.
func (h *harness) wait(id string) history.Run {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan history.Run, 1)
	errc := make(chan error, 1)
	go func() {
		r, err := h.e.WaitClosed(ctx, id)
		if err != nil {
			errc <- err
			return
		}
		done <- r
	}()
	for {
		select {
		case r := <-done:
			return r
		case err := <-errc:
			h.t.Fatalf("wait %s: %v", id, err)
		case <-time.After(2 * time.Millisecond):
			h.clock.Advance(time.Second)
		}
	}
}

func (h *harness) output(r history.Run) string {
	h.t.Helper()
	evs, err := h.store.Events(r.RunID, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	if ps := history.Check(r, evs); len(ps) > 0 {
		h.t.Fatalf("history check: %v", ps)
	}
	c, _ := history.DataOf[history.Closed](evs[len(evs)-1])
	if c.Failure != nil {
		return "failed: " + c.Failure.Message
	}
	return string(c.Output)
}

const head = "wend: v1\nname: t\nplugins: {p: ./p}\n"

func TestRunToCompletion(t *testing.T) {
	h := newHarness(t)
	f := h.write("order.wend.yaml", head+`
steps:
  - id: a
    activity: p.echo
    with: {n: "${{ input.n }}"}
  - id: par
    parallel:
      - {activity: p.echo, with: 1}
      - steps: [{delay: 5m}, {activity: p.echo, with: 2}]
  - id: loop
    for_each: "${{ [1, 2, 3] }}"
    concurrency: 2
    steps: [{activity: p.echo, with: "${{ item * 10 }}"}]
  - id: ok
    wait_for_signal: go
output: {a: "${{ steps.a.output.n }}", par: "${{ steps.par.output }}", loop: "${{ steps.loop.output }}", by: "${{ steps.ok.output }}"}
`)
	r := h.start(f, "order-1", `{"n": 7}`)
	if err := h.e.Signal(context.Background(), "order-1", "go", json.RawMessage(`"ann"`)); err != nil {
		t.Fatal(err)
	}
	r = h.wait("order-1")
	if r.Status != history.StatusCompleted {
		t.Fatalf("status %s: %s", r.Status, h.output(r))
	}
	if got, want := h.output(r), `{"a":7,"by":"ann","loop":[10,20,30],"par":[1,2]}`; got != want {
		t.Fatalf("output %s, want %s", got, want)
	}
	// A signal to the finished run is refused with a clear error.
	err := h.e.Signal(context.Background(), "order-1", "go", nil)
	if !errors.Is(err, ErrRunClosed) || !strings.Contains(err.Error(), "completed") {
		t.Fatalf("signal after close: %v", err)
	}
	if ts, _ := h.store.Tasks(); len(ts) != 0 {
		t.Fatalf("tasks left after completion: %+v", ts)
	}
}

func TestStartIsIdempotentByID(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	a := h.start(f, "same", "null")
	b := h.start(f, "same", "null")
	if a.RunID != b.RunID {
		t.Fatalf("second start made run %s, first was %s", b.RunID, a.RunID)
	}
	runs, _ := h.store.Runs(history.RunFilter{WorkflowID: "same"})
	if len(runs) != 1 {
		t.Fatalf("%d runs for one id", len(runs))
	}
}

func TestInputSchemaChecked(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"input: {type: object, required: [user]}\nsteps: [{delay: 1s}]\n")
	src, _ := os.ReadFile(f)
	_, _, err := h.e.Start(context.Background(), StartRequest{SpecFile: f, Source: string(src), Input: json.RawMessage(`{}`)})
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "user") {
		t.Fatalf("err = %v", err)
	}
}

func TestRetriesOnVirtualClock(t *testing.T) {
	h := newHarness(t)
	var at []time.Time
	h.acts.fns["flaky"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
		at = append(at, h.clock.Now())
		if c.Attempt < 3 {
			return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
		}
		return json.RawMessage(`"ok"`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{id: f, activity: p.flaky, retry: {tries: 3, backoff: [5s, 30s]}}]\noutput: \"${{ steps.f.output }}\"\n")
	h.start(f, "r", "null")
	r := h.wait("r")
	if h.output(r) != `"ok"` || len(at) != 3 {
		t.Fatalf("output %s after %d tries", h.output(r), len(at))
	}
	if d1, d2 := at[1].Sub(at[0]), at[2].Sub(at[1]); d1 < 5*time.Second || d1 > 6*time.Second || d2 < 30*time.Second || d2 > 31*time.Second {
		t.Fatalf("backoff waits %v, %v; want 5s, 30s", d1, d2)
	}
	// The execution id is the same for every try; the attempt id differs.
	h.acts.mu.Lock()
	defer h.acts.mu.Unlock()
	if h.acts.calls[0].ActivityExecutionID != h.acts.calls[2].ActivityExecutionID || h.acts.calls[0].ActivityAttemptID == h.acts.calls[2].ActivityAttemptID {
		t.Fatalf("ids: %+v", h.acts.calls)
	}
}

func TestTimeoutThenRetry(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["hang"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if c.Attempt == 1 {
			<-ctx.Done() // ignores nothing: stops when cancelled
			return nil, ctx.Err()
		}
		return json.RawMessage(`2`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{activity: p.hang, timeout: 10s, retry: {tries: 2}}]\n")
	h.start(f, "r", "null")
	r := h.wait("r")
	evs, _ := h.store.Events(r.RunID, 0)
	var types []string
	for _, e := range evs {
		types = append(types, string(e.Type))
	}
	if r.Status != history.StatusCompleted || !strings.Contains(strings.Join(types, ","), "ActivityTimedOut,ActivityRetryScheduled") {
		t.Fatalf("status %s, events %v", r.Status, types)
	}
}

// A call that ignores its cancellation after a timeout must not keep its MaxActivities slot:
// with one slot, the retry could not run otherwise.
func TestHungCallFreesItsSlot(t *testing.T) {
	h := newHarness(t)
	h.e.Close()
	h.slots = 1
	h.open()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the engine's Close, which waits for its calls
	h.acts.fns["stuck"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if c.Attempt == 1 {
			<-release // ignores its cancellation
			return nil, errors.New("gave up late")
		}
		return json.RawMessage(`"fresh"`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{id: s, activity: p.stuck, timeout: 10s, retry: {tries: 2}}]\noutput: \"${{ steps.s.output }}\"\n")
	h.start(f, "w", "null")
	r := h.wait("w")
	if r.Status != history.StatusCompleted || h.output(r) != `"fresh"` {
		t.Fatalf("%s, output %s", r.Status, h.output(r))
	}
}

func TestChildWorkflow(t *testing.T) {
	h := newHarness(t)
	h.write("child.wend.yaml", head+"steps: [{id: c, activity: p.echo, with: \"${{ input.x + 1 }}\"}]\noutput: \"${{ steps.c.output }}\"\n")
	f := h.write("parent.wend.yaml", head+"steps: [{id: k, run_workflow: ./child.wend.yaml, with: {x: 41}}]\noutput: \"${{ steps.k.output }}\"\n")
	h.start(f, "parent", "null")
	r := h.wait("parent")
	if h.output(r) != "42" {
		t.Fatalf("output %s", h.output(r))
	}
	kids, _ := h.store.Runs(history.RunFilter{WorkflowID: "parent/" + r.RunID + "/steps[0]"})
	if len(kids) != 1 || kids[0].ParentRunID != r.RunID || kids[0].Status != history.StatusCompleted {
		t.Fatalf("child runs %+v", kids)
	}
}

func TestRecoverAfterCrash(t *testing.T) {
	h := newHarness(t)
	block := make(chan struct{})
	h.acts.fns["slow"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		select {
		case <-block:
			return json.RawMessage(`"late"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := h.write("w.wend.yaml", head+"steps:\n  - {id: a, activity: p.echo, with: 1}\n  - {id: b, activity: p.slow}\n  - {delay: 1m}\noutput: \"${{ [steps.a.output, steps.b.output] }}\"\n")
	h.start(f, "w", "null")
	for h.acts.count("slow") == 0 {
		time.Sleep(time.Millisecond)
	}
	h.e.Close() // the process dies with b in flight; its task stays in the store
	if err := os.WriteFile(f, []byte("wend: v1\nname: changed\nsteps: [{fail: x}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	delete(h.acts.fns, "slow") // the next process's plugin answers at once
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || rep.Resumed != 1 || rep.Tasks != 1 || len(rep.Blocked) != 0 {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	r := h.wait("w")
	if got := h.output(r); got != "[1,null]" {
		t.Fatalf("output %s (the run must use its recorded spec, not the changed file)", got)
	}
	if h.acts.count("echo") != 1 || h.acts.count("slow") != 2 {
		t.Fatalf("calls: echo %d slow %d; want 1 and 2 (at least once: b re-ran)", h.acts.count("echo"), h.acts.count("slow"))
	}
}

// TestCancelStopsInFlight: a call that hangs until cancelled is cancelled with its run, whether
// it runs on a goroutine of its own (the first step) or on the one whose try just reported (b,
// carried by a's report: carrier in activity.go).
func TestCancelStopsInFlight(t *testing.T) {
	for _, tc := range []struct{ name, steps string }{
		{"own goroutine", "[{activity: p.long}]"},
		{"carried try", "[{id: a, activity: p.quick}, {id: b, activity: p.long}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			seen := make(chan struct{})
			h.acts.fns["long"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
				close(seen)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			f := h.write("w.wend.yaml", head+"steps: "+tc.steps+"\n")
			h.start(f, "c", "null")
			<-seen
			if err := h.e.Cancel(context.Background(), "c", "ops"); err != nil {
				t.Fatal(err)
			}
			if r := h.wait("c"); r.Status != history.StatusCancelled {
				t.Fatalf("status %s", r.Status)
			}
		})
	}
}
