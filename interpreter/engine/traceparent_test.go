package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
)

// TestTraceParentReachesEveryTry: a run started with a traceparent records it in
// WorkflowStarted and hands each try the run's trace with the try's own span; a run started
// without one gives its tries none unless Options.TraceContext asks for a derived one.
func TestTraceParentReachesEveryTry(t *testing.T) {
	const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name         string
		traceParent  string
		traceContext bool
		want         func(runID, execID string, attempt int) string
	}{
		{"accepted", accepted, false, func(r, e string, a int) string { return tracecontext.ForTry(r, accepted, e, a) }},
		{"none, tracing off", "", false, func(string, string, int) string { return "" }},
		{"none, tracing on", "", true, func(r, e string, a int) string { return tracecontext.ForTry(r, "", e, a) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.e.Close()
			h.e = New(Options{Store: h.store, Activities: h.acts, Clock: h.clock, Logf: t.Logf, TraceContext: tt.traceContext})
			t.Cleanup(func() { h.e.Close() })
			failed := false
			h.acts.fns["flaky"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
				if !failed {
					failed = true
					return nil, &history.ActivityError{Type: "Busy", Message: "once"}
				}
				return json.RawMessage(`1`), nil
			}
			f := h.write("t.wend.yaml", head+"steps: [{id: a, activity: p.flaky, retry: {tries: 2, backoff: [1s]}}]\n")
			src, _ := os.ReadFile(f)
			run, _, err := h.e.Start(context.Background(), StartRequest{WorkflowID: "w", SpecFile: f, Source: string(src), TraceParent: tt.traceParent})
			if err != nil {
				t.Fatal(err)
			}
			h.wait("w")
			evs, _ := h.store.Events(run.RunID, 0)
			st, _ := history.DataOf[history.Started](evs[0])
			if st.TraceParent != tt.traceParent {
				t.Fatalf("WorkflowStarted records traceparent %q, want %q", st.TraceParent, tt.traceParent)
			}
			h.acts.mu.Lock()
			defer h.acts.mu.Unlock()
			if len(h.acts.calls) != 2 {
				t.Fatalf("%d calls, want 2", len(h.acts.calls))
			}
			for _, c := range h.acts.calls {
				if want := tt.want(run.RunID, c.ActivityExecutionID, c.Attempt); c.TraceParent != want {
					t.Errorf("try %d got traceparent %q, want %q", c.Attempt, c.TraceParent, want)
				}
			}
		})
	}
}

func TestStartRefusesABadTraceParent(t *testing.T) {
	h := newHarness(t)
	f := h.write("t.wend.yaml", head+"steps: [{id: a, activity: p.echo}]\n")
	src, _ := os.ReadFile(f)
	_, _, err := h.e.Start(context.Background(), StartRequest{WorkflowID: "w", SpecFile: f, Source: string(src), TraceParent: "00-zz"})
	if !errors.Is(err, ErrInvalidInput) || !errors.Is(err, tracecontext.ErrMalformed) {
		t.Fatalf("Start with a bad traceparent = %v, want ErrInvalidInput and ErrMalformed", err)
	}
}

// TestChildRunJoinsItsParentsTrace: a run_workflow child records, in its WorkflowStarted, the
// parent's trace with the parent's step span as its parent, so its spans and its tries nest
// under that step; grandchildren nest the same way. A parent with no trace gives its child none.
func TestChildRunJoinsItsParentsTrace(t *testing.T) {
	const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name         string
		traceParent  string
		traceContext bool
		traced       bool
	}{
		{"accepted", accepted, false, true},
		{"derived", "", true, true},
		{"none", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.e.Close()
			h.e = New(Options{Store: h.store, Activities: h.acts, Clock: h.clock, Logf: t.Logf, TraceContext: tt.traceContext})
			t.Cleanup(func() { h.e.Close() })
			h.write("grandchild.wend.yaml", head+"steps: [{id: g, activity: p.echo, with: 1}]\n")
			h.write("child.wend.yaml", head+"steps: [{id: k, run_workflow: ./grandchild.wend.yaml}]\n")
			f := h.write("parent.wend.yaml", head+"steps: [{id: a, activity: p.echo, with: 0}, {id: k, run_workflow: ./child.wend.yaml}]\n")
			src, _ := os.ReadFile(f)
			parent, _, err := h.e.Start(context.Background(), StartRequest{WorkflowID: "p", SpecFile: f, Source: string(src), TraceParent: tt.traceParent})
			if err != nil {
				t.Fatal(err)
			}
			h.wait("p")
			child := h.onlyRun("p/" + parent.RunID + "/steps[1]")
			grandchild := h.onlyRun(child.WorkflowID + "/" + child.RunID + "/steps[0]")
			for _, c := range []struct {
				run         history.Run
				parent      history.Run
				parentTrace string
			}{{child, parent, tt.traceParent}, {grandchild, child, ""}} {
				want := ""
				if tt.traced {
					parentTrace := c.parentTrace
					if c.parent.RunID != parent.RunID {
						parentTrace = h.startedOf(c.parent.RunID).TraceParent
					}
					want = tracecontext.ForChild(c.parent.RunID, parentTrace, c.run.ParentStep)
				}
				if got := h.startedOf(c.run.RunID).TraceParent; got != want {
					t.Errorf("run %s records traceparent %q, want %q", c.run.WorkflowID, got, want)
				}
			}
			if !tt.traced {
				return
			}
			root, _ := tracecontext.ForRun(parent.RunID, tt.traceParent)
			tp, err := tracecontext.Parse(h.startedOf(grandchild.RunID).TraceParent)
			if err != nil || tp.TraceID != root.TraceID {
				t.Errorf("grandchild's trace %v (%v), want the parent's %s", tp, err, root.TraceIDString())
			}
			h.acts.mu.Lock()
			defer h.acts.mu.Unlock()
			tries := 0
			for _, c := range h.acts.calls {
				if c.RunID != grandchild.RunID {
					continue
				}
				tries++
				if !strings.Contains(c.TraceParent, root.TraceIDString()) {
					t.Errorf("the grandchild's try carries %q, not the parent's trace", c.TraceParent)
				}
			}
			if tries != 1 {
				t.Errorf("the grandchild made %d tries, want 1", tries)
			}
		})
	}
}

func (h *harness) onlyRun(workflowID string) history.Run {
	h.t.Helper()
	runs, err := h.store.Runs(history.RunFilter{WorkflowID: workflowID})
	if err != nil || len(runs) != 1 {
		h.t.Fatalf("runs of %s: %v, %v", workflowID, runs, err)
	}
	return runs[0]
}

func (h *harness) startedOf(runID string) history.Started {
	h.t.Helper()
	evs, err := h.store.Events(runID, 0)
	if err != nil || len(evs) == 0 {
		h.t.Fatalf("events of %s: %v", runID, err)
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// childlessStore fails, like a lost disk, every commit that would create a child run: the
// engine over it stops with the parent's child task stored and the child not started.
type childlessStore struct{ *history.MemStore }

func (s childlessStore) Commit(ctx context.Context, c history.Commit) error {
	for _, u := range c.Runs {
		if u.Run.ParentRunID != "" {
			return errors.New("disk gone")
		}
	}
	return s.MemStore.Commit(ctx, c)
}

// TestChildStartedAfterRestartJoinsItsParentsTrace: a child whose parent's process stopped
// before starting it is started by the next process from the stored task, the parent's
// state not in memory, and still records the parent's accepted trace under the step's span.
func TestChildStartedAfterRestartJoinsItsParentsTrace(t *testing.T) {
	const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	h := newHarness(t)
	h.e.Close()
	h.write("child.wend.yaml", head+"steps: [{id: c, activity: p.echo, with: 1}]\n")
	f := h.write("parent.wend.yaml", head+"steps: [{id: k, run_workflow: ./child.wend.yaml}]\n")
	src, _ := os.ReadFile(f)
	first := New(Options{Store: childlessStore{h.store}, Activities: h.acts, Clock: h.clock, Logf: t.Logf})
	parent, _, err := first.Start(context.Background(), StartRequest{WorkflowID: "p", SpecFile: f, Source: string(src), TraceParent: accepted})
	if err != nil {
		t.Fatal(err)
	}
	first.Close() // waits for the child's start, which failed and stopped the engine
	if runs, _ := h.store.Runs(history.RunFilter{WorkflowID: "p/" + parent.RunID + "/steps[0]"}); len(runs) != 0 {
		t.Fatalf("the child started in the first process: %v", runs)
	}
	h.open()
	if _, err := h.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.wait("p")
	child := h.onlyRun("p/" + parent.RunID + "/steps[0]")
	if got, want := h.startedOf(child.RunID).TraceParent, tracecontext.ForChild(parent.RunID, accepted, "steps[0]"); got != want {
		t.Errorf("the child records traceparent %q, want %q", got, want)
	}
}
