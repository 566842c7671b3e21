package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wendflow/wend/history"
)

// holds is an activity that blocks each run's call until the test lets that run go, and
// records, by key (the call's input), the order calls began and the most at once.
type holds struct {
	mu      sync.Mutex
	gates   map[string]chan struct{} // by workflow id
	running map[string]int
	most    map[string]int
	began   map[string][]string // workflow ids by key, in the order their calls began
}

func newHolds(h *harness) *holds {
	hs := &holds{gates: map[string]chan struct{}{}, running: map[string]int{}, most: map[string]int{}, began: map[string][]string{}}
	h.acts.fns["hold"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		var key string
		_ = json.Unmarshal(c.Input, &key)
		hs.mu.Lock()
		g := hs.gate(c.WorkflowID)
		hs.running[key]++
		hs.most[key] = max(hs.most[key], hs.running[key])
		hs.began[key] = append(hs.began[key], c.WorkflowID)
		hs.mu.Unlock()
		defer func() {
			hs.mu.Lock()
			hs.running[key]--
			hs.mu.Unlock()
		}()
		select {
		case <-g:
			return json.RawMessage(`"ok"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return hs
}

func (hs *holds) gate(id string) chan struct{} {
	g := hs.gates[id]
	if g == nil {
		g = make(chan struct{})
		hs.gates[id] = g
	}
	return g
}

func (hs *holds) release(id string) {
	hs.mu.Lock()
	close(hs.gate(id))
	hs.mu.Unlock()
}

func (hs *holds) begun(key string) []string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return slices.Clone(hs.began[key])
}

func keyedFile(h *harness, limit int) string {
	return h.write("keyed.wend.yaml", fmt.Sprintf("wend: v1\nname: keyed\nplugins: {p: ./p}\n"+
		"concurrency: {key: \"${{ input.c }}\", limit: %d}\nsteps: [{id: h, activity: p.hold, with: \"${{ input.c }}\"}]\n", limit))
}

func (h *harness) status(id string) string {
	h.t.Helper()
	runs, err := h.store.Runs(history.RunFilter{WorkflowID: id})
	if err != nil || len(runs) == 0 {
		h.t.Fatalf("runs of %s: %v %v", id, runs, err)
	}
	return runs[0].Status
}

// Runs over their key's limit wait queued, and start first queued, first started, as runs of
// their key close; other keys never wait on them.
func TestRunQueueByKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		runs  []string // workflow ids: the key is the part before the dash
	}{
		{"one per key", 1, []string{"ann-1", "ann-2", "bob-1", "ann-3", "bob-2"}},
		{"two per key", 2, []string{"ann-1", "ann-2", "ann-3", "ann-4", "bob-1", "ann-5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			hs := newHolds(h)
			f := keyedFile(h, tc.limit)
			byKey := map[string][]string{}
			for _, id := range tc.runs {
				key, _, _ := strings.Cut(id, "-")
				r := h.start(f, id, fmt.Sprintf(`{"c": %q}`, key))
				byKey[key] = append(byKey[key], id)
				want := history.StatusRunning
				if len(byKey[key]) > tc.limit {
					want = history.StatusQueued
				}
				if r.Status != want {
					t.Fatalf("start %s: %s, want %s", id, r.Status, want)
				}
			}
			queued := 0
			for _, ids := range byKey {
				queued += max(len(ids)-tc.limit, 0)
			}
			if n := h.e.QueuedRuns(); n != int64(queued) {
				t.Fatalf("%d queued, want %d", n, queued)
			}
			if qi, ok := h.e.Queued("ann-3"); !ok || qi.Key != "ann" || qi.Running != tc.limit || qi.Position != 3-tc.limit {
				t.Fatalf("ann-3 queued %+v %v", qi, ok)
			}
			for key, ids := range byKey {
				// Close the runs of the key one by one, oldest first: each close starts the
				// first queued run, and only it.
				for i, id := range ids {
					waitFor(t, id+" called", func() bool { return slices.Contains(hs.begun(key), id) })
					hs.release(id)
					if r := waitStill(t, h, id); r.Status != history.StatusCompleted {
						t.Fatalf("%s: %s", id, r.Status)
					}
					if next := i + tc.limit; next < len(ids) {
						waitFor(t, ids[next]+" started", func() bool { return h.status(ids[next]) != history.StatusQueued })
						for _, later := range ids[next+1:] {
							if st := h.status(later); st != history.StatusQueued {
								t.Fatalf("%s is %s: it was queued after %s, which just started", later, st, ids[next])
							}
						}
					}
				}
				got := hs.begun(key)
				slices.Sort(got)
				if want := slices.Sorted(slices.Values(ids)); !slices.Equal(got, want) {
					t.Errorf("key %s: calls %v, want one for each of %v", key, got, want)
				}
				hs.mu.Lock()
				most := hs.most[key]
				hs.mu.Unlock()
				if most > tc.limit {
					t.Errorf("key %s: %d runs at once, over the limit %d", key, most, tc.limit)
				}
			}
			if n := h.e.QueuedRuns(); n != 0 {
				t.Fatalf("%d still queued", n)
			}
		})
	}
}

// A queued run is cancelled or terminated without starting: it closes with no history, and
// the queue goes on without it.
func TestRunQueueCancel(t *testing.T) {
	h := newHarness(t)
	hs := newHolds(h)
	f := keyedFile(h, 1)
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		h.start(f, id, `{"c": "ann"}`)
	}
	ctx := context.Background()
	if err := h.e.Cancel(ctx, "a2", "not now"); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Terminate(ctx, "a3", "never"); err != nil {
		t.Fatal(err)
	}
	for id, reason := range map[string]string{"a2": history.ClosedCancelled, "a3": history.ClosedTerminated} {
		r := waitStill(t, h, id)
		evs, _ := h.store.Events(r.RunID, 0)
		if r.Status != history.StatusCancelled || r.ClosedReason != reason || len(evs) != 0 || len(history.Check(r, evs)) != 0 {
			t.Fatalf("%s: %+v with %d events, check %v", id, r, len(evs), history.Check(r, evs))
		}
		if err := h.e.Cancel(ctx, id, "again"); !errors.Is(err, ErrRunClosed) {
			t.Fatalf("cancel %s again: %v, want ErrRunClosed", id, err)
		}
	}
	if n := h.e.QueuedRuns(); n != 1 {
		t.Fatalf("%d queued, want 1 (a4)", n)
	}
	// A wait on a queued run lasts through the queue to the run's end.
	waited := make(chan history.Run, 1)
	go func() {
		r, err := h.e.WaitClosed(ctx, "a4")
		if err != nil {
			t.Errorf("wait for a4: %v", err)
		}
		waited <- r
	}()
	hs.release("a1")
	waitStill(t, h, "a1")
	waitFor(t, "a4 called", func() bool { return slices.Contains(hs.begun("ann"), "a4") })
	hs.release("a4")
	if r := <-waited; r.Status != history.StatusCompleted {
		t.Fatalf("the wait for a4 ended with a4 %s", r.Status)
	}
	if got := hs.begun("ann"); !slices.Equal(got, []string{"a1", "a4"}) {
		t.Fatalf("calls %v: a cancelled queued run must never start", got)
	}
}

// The queue is durable: after the engine stops and another resumes over the store, the queued
// runs keep their order and the limit still holds.
func TestRunQueueSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	hs := newHolds(h)
	f := keyedFile(h, 1)
	ids := []string{"a1", "a2", "a3"}
	for _, id := range ids {
		h.start(f, id, `{"c": "ann"}`)
	}
	waitFor(t, "a1 called", func() bool { return len(hs.begun("ann")) == 1 })
	h.e.Close()
	h.open()
	if _, err := h.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if qi, ok := h.e.Queued("a3"); !ok || qi.Position != 2 || qi.Running != 1 {
		t.Fatalf("a3 after restart: %+v %v", qi, ok)
	}
	for _, id := range ids {
		waitFor(t, id+" called", func() bool { return slices.Contains(hs.begun("ann"), id) })
		hs.release(id)
		if r := waitStill(t, h, id); r.Status != history.StatusCompleted {
			t.Fatalf("%s: %s", id, r.Status)
		}
	}
	// a1's call was cut by the stop and made again: a1, a1, a2, a3.
	if got := hs.begun("ann"); !slices.Equal(got, []string{"a1", "a1", "a2", "a3"}) {
		t.Fatalf("calls %v", got)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.most["ann"] != 1 {
		t.Fatalf("%d at once, over the limit 1", hs.most["ann"])
	}
}

// A key that is not a string, number or boolean refuses the start, naming the key's line; a
// start of a queued id with the same input is the queued run (start is idempotent).
func TestRunQueueStartEdges(t *testing.T) {
	h := newHarness(t)
	newHolds(h)
	f := keyedFile(h, 1)
	src := mustRead(t, f)
	_, _, err := h.e.Start(context.Background(), StartRequest{WorkflowID: "x", SpecFile: f, Source: src, Input: json.RawMessage(`{"c": [1]}`)})
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "keyed.wend.yaml:4: concurrency.key: evaluates to a list") {
		t.Fatalf("start with a list key: %v", err)
	}
	h.start(f, "a1", `{"c": "ann"}`)
	q := h.start(f, "a2", `{"c": "ann"}`)
	again, started, err := h.e.Start(context.Background(), StartRequest{WorkflowID: "a2", SpecFile: f, Source: src, Input: json.RawMessage(`{"c": "ann"}`)})
	if err != nil || started || again.RunID != q.RunID || again.Status != history.StatusQueued {
		t.Fatalf("start a2 again: %+v %v %v", again, started, err)
	}
	if _, _, err := h.e.Start(context.Background(), StartRequest{WorkflowID: "a2", SpecFile: f, Source: src, Input: json.RawMessage(`{"c": "bob"}`)}); !errors.Is(err, ErrIDTaken) {
		t.Fatalf("start a2 with other input: %v, want ErrIDTaken", err)
	}
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run that continues as new keeps its place for its next run: the queued run of its key
// starts only when the chain ends.
func TestRunQueueContinueKeepsPlace(t *testing.T) {
	h := newHarness(t)
	f := h.write("chain.wend.yaml", "wend: v1\nname: chain\nconcurrency: {key: \"${{ input.c }}\"}\nsteps:\n"+
		"  - {wait_for_signal: go}\n  - {if: \"${{ (input.i ?? 0) < 1 }}\", continue_as_new: true, with: {c: \"${{ input.c }}\", i: 1}}\n")
	h.start(f, "c1", `{"c": "ann"}`)
	if r := h.start(f, "c2", `{"c": "ann", "i": 1}`); r.Status != history.StatusQueued { // i: 1, no continue
		t.Fatalf("c2: %s, want queued", r.Status)
	}
	ctx := context.Background()
	if err := h.e.Signal(ctx, "c1", "go", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "c1 continued", func() bool {
		runs, _ := h.store.Runs(history.RunFilter{WorkflowID: "c1"})
		return len(runs) == 2 && slices.ContainsFunc(runs, func(r history.Run) bool { return r.Status == history.StatusRunning })
	})
	if st := h.status("c2"); st != history.StatusQueued {
		t.Fatalf("c2 is %s while c1's next run holds the place", st)
	}
	if err := h.e.Signal(ctx, "c1", "go", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "c2 started", func() bool { return h.status("c2") == history.StatusRunning })
	if err := h.e.Signal(ctx, "c2", "go", nil); err != nil {
		t.Fatal(err)
	}
	if r := waitStill(t, h, "c2"); r.Status != history.StatusCompleted {
		t.Fatalf("c2: %s", r.Status)
	}
}
