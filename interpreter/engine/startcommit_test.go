package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// gateStore is a MemStore whose commits, once armed, stop at a gate: each reports its arrival
// and waits until the test opens the gate. Commits that reach the store at the same time
// are what a group-committing store (boltstore) writes in one transaction.
type gateStore struct {
	*history.MemStore
	mu      sync.Mutex
	armed   bool
	arrived chan history.Commit
	open    chan struct{}
	once    sync.Once
}

func newGateStore() *gateStore {
	return &gateStore{MemStore: history.NewMemStore(), arrived: make(chan history.Commit, 100), open: make(chan struct{})}
}

// release opens the gate; safe to call more than once.
func (g *gateStore) release() { g.once.Do(func() { close(g.open) }) }

// gated makes an engine over a new gateStore; the gate opens before the engine closes at the
// test's end, so a failed test does not hang in Close.
func gated(t *testing.T) (*Engine, *gateStore) {
	store := newGateStore()
	e := New(Options{Store: store, Activities: &fakeActs{}, Clock: NewFakeClock(t0), Logf: t.Logf})
	t.Cleanup(func() { e.Close() })
	t.Cleanup(store.release)
	return e, store
}

func (g *gateStore) arm() {
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
}

func (g *gateStore) Commit(ctx context.Context, c history.Commit) error {
	g.mu.Lock()
	armed := g.armed
	g.mu.Unlock()
	if armed {
		g.arrived <- c
		<-g.open
	}
	return g.MemStore.Commit(ctx, c)
}

// await returns the next commit to reach the gate; it fails the test if none does in 10 s
// (a deadlock guard, not a timing assertion: the commit is due at once).
func (g *gateStore) await(t *testing.T, why string) history.Commit {
	t.Helper()
	select {
	case c := <-g.arrived:
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("no commit reached the store: %s", why)
		return history.Commit{}
	}
}

func startedID(c history.Commit) string {
	if len(c.Runs) == 0 {
		return ""
	}
	return c.Runs[0].Run.WorkflowID
}

type startResult struct {
	rec     history.Run
	started bool
	err     error
}

// TestConcurrentStartsShareACommit: Start held the engine's lock across its store commit, so
// one start's commit had to end before the next could begin and concurrent starts never
// shared a group commit (137–450 starts a second at 100,000 runs). Now all n
// starts reach the store while the first is still committing.
func TestConcurrentStartsShareACommit(t *testing.T) {
	const n = 8
	e, store := gated(t)
	f := writeSpec(t, head+"steps: [{wait_for_signal: go}]\n")
	store.arm()
	results := make(chan startResult, n)
	for i := range n {
		go func() {
			rec, started, err := e.Start(context.Background(), StartRequest{WorkflowID: fmt.Sprint("r", i), SpecFile: f.path, Source: f.src})
			results <- startResult{rec, started, err}
		}()
	}
	seen := map[string]bool{}
	for i := range n {
		c := store.await(t, fmt.Sprintf("%d of %d concurrent starts reached the store while the first was committing", i, n))
		seen[startedID(c)] = true
	}
	if len(seen) != n {
		t.Fatalf("commits for %d distinct ids, want %d: %v", len(seen), n, seen)
	}
	store.release()
	for range n {
		if r := <-results; r.err != nil || !r.started {
			t.Fatalf("start: %+v", r)
		}
	}
	if s := e.Idle(); s.Open != n {
		t.Fatalf("%+v, want %d open runs", s, n)
	}
}

// TestStartOfATakenIDWaitsForTheCommitInFlight keeps G8 exact now that Start commits without
// the engine's lock: while the first start of an id is committing, a second start of the same
// id with the same input waits and attaches to that run, one with other input is refused
// (ErrIDTaken), a start of another id is not held up, and a signal and a wait on the id wait
// for the run to be driven instead of calling it blocked.
func TestStartOfATakenIDWaitsForTheCommitInFlight(t *testing.T) {
	e, store := gated(t)
	f := writeSpec(t, head+"steps: [{id: w, wait_for_signal: go}]\noutput: \"${{ steps.w.output }}\"\n")
	start := func(id, input string) chan startResult {
		ch := make(chan startResult, 1)
		go func() {
			rec, started, err := e.Start(context.Background(), StartRequest{WorkflowID: id, SpecFile: f.path, Source: f.src, Input: json.RawMessage(input)})
			ch <- startResult{rec, started, err}
		}()
		return ch
	}
	store.arm()
	first := start("x", `{"n":1}`)
	if id := startedID(store.await(t, "the first start")); id != "x" {
		t.Fatalf("first commit for %q", id)
	}
	same, other := start("x", `{"n":1}`), start("x", `{"n":2}`)
	signalled := make(chan error, 1)
	go func() { signalled <- e.Signal(context.Background(), "x", "go", json.RawMessage(`"s"`)) }()
	waited := make(chan history.Run, 1)
	go func() {
		r, err := e.WaitClosed(context.Background(), "x")
		if err != nil {
			t.Errorf("wait: %v", err)
		}
		waited <- r
	}()
	y := start("y", `{}`)
	if id := startedID(store.await(t, "a start of another id, while x commits")); id != "y" {
		t.Fatalf("second commit at the gate is for %q, want y: a start of x went past the one in flight", id)
	}
	store.release() // the signal's commit and everything after go through
	a := <-first
	if a.err != nil || !a.started {
		t.Fatalf("first start: %+v", a)
	}
	if b := <-same; b.err != nil || b.started || b.rec.RunID != a.rec.RunID {
		t.Fatalf("same id, same input: %+v, want run %s attached", b, a.rec.RunID)
	}
	if c := <-other; !errors.Is(c.err, ErrIDTaken) || c.started {
		t.Fatalf("same id, other input: %+v, want ErrIDTaken", c)
	}
	if r := <-y; r.err != nil || !r.started {
		t.Fatalf("start y: %+v", r)
	}
	if err := <-signalled; err != nil {
		t.Fatalf("signal to x while its start committed: %v", err)
	}
	if r := <-waited; r.Status != history.StatusCompleted || r.RunID != a.rec.RunID {
		t.Fatalf("wait on x: %+v", r)
	}
	if runs, _ := store.Runs(history.RunFilter{WorkflowID: "x"}); len(runs) != 1 {
		t.Fatalf("%d runs of x, want 1", len(runs))
	}
}

// TestCloseWaitsForAStartInFlight: with the engine's lock no longer held across a start's
// commit, Close still waits for a start that is committing, so the caller never closes the
// store under it, and a start after Close is refused.
func TestCloseWaitsForAStartInFlight(t *testing.T) {
	e, store := gated(t)
	f := writeSpec(t, head+"steps: [{wait_for_signal: go}]\n")
	store.arm()
	res := make(chan startResult, 1)
	go func() {
		rec, started, err := e.Start(context.Background(), StartRequest{WorkflowID: "x", SpecFile: f.path, Source: f.src})
		res <- startResult{rec, started, err}
	}()
	store.await(t, "the start")
	applied := make(chan int, 1)
	go func() {
		e.Close()
		runs, _ := store.Runs(history.RunFilter{})
		applied <- len(runs) // the start's commit, if Close waited for it
	}()
	select {
	case <-e.ctx.Done(): // Close has begun: it cancels after marking the engine stopped
	case <-time.After(10 * time.Second):
		t.Fatal("Close never began")
	}
	store.release()
	if n := <-applied; n != 1 {
		t.Fatal("Close returned while a start was committing")
	}
	if r := <-res; r.err != nil || !r.started {
		t.Fatalf("start: %+v", r)
	}
	if _, _, err := e.Start(context.Background(), StartRequest{WorkflowID: "z", SpecFile: f.path, Source: f.src}); !errors.Is(err, ErrStopped) {
		t.Fatalf("start after Close: %v, want ErrStopped", err)
	}
}

type specFile struct{ path, src string }

func writeSpec(t *testing.T, src string) specFile {
	t.Helper()
	p := t.TempDir() + "/w.wend.yaml"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return specFile{p, src}
}
