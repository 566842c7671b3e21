package driver

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/tracing/traceparent"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// recorder is a Spans that keeps what it is fed.
type recorder struct {
	mu      sync.Mutex
	started int // WorkflowStarted events that started a recorder
	live    []history.EventType
	replay  []history.EventType
}

func (r *recorder) options() Options {
	return Options{Spans: func(_ history.Run, started history.Event) Spans {
		r.mu.Lock()
		defer r.mu.Unlock()
		if started.Type == history.WorkflowStarted {
			r.started++
		}
		return r
	}}
}

func (r *recorder) Record(ev history.Event, live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if live {
		r.live = append(r.live, ev.Type)
	} else {
		r.replay = append(r.replay, ev.Type)
	}
}

// TestSpansOfANewRun: a run executed for the first time feeds its span recorder every event
// it records after WorkflowStarted, in order, all live.
func TestSpansOfANewRun(t *testing.T) {
	rec := &recorder{}
	e, _ := newEnvWith(t, os.Stderr, func(r Registry) { RegisterWith(r, rec.options()) })
	evs := run(t, e, startInput(`wend: v1
name: t
plugins: {p: ./p}
steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: d, delay: 1s}
`, nil, nil))
	if rec.started != 1 || len(rec.replay) != 0 {
		t.Fatalf("started %d recorders, fed %d events as replayed; want 1 and none", rec.started, len(rec.replay))
	}
	if len(rec.live) != len(evs)-1 {
		t.Fatalf("fed %d events live, want the %d after WorkflowStarted", len(rec.live), len(evs)-1)
	}
	for i, typ := range rec.live {
		if typ != evs[i+1].Type {
			t.Errorf("event %d fed as %s, recorded as %s", i+2, typ, evs[i+1].Type)
		}
	}
}

// TestReplayFeedsNothingLive: replaying a recorded run (as a worker does after a sticky-cache
// eviction, a restart, or for a query) feeds its events to the span recorder as replayed,
// through the run's end, so it rebuilds what is open and exports nothing again.
func TestReplayFeedsNothingLive(t *testing.T) {
	raw, err := os.ReadFile("testdata/histories/order.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := client.HistoryFromJSON(bytes.NewReader(raw), client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ex struct {
		WorkflowID string `json:"workflow_id"`
		RunID      string `json:"run_id"`
	}
	if b, err := os.ReadFile("testdata/histories/order.execution.json"); err != nil || json.Unmarshal(b, &ex) != nil {
		t.Fatalf("read the recorded run's ids: %v", err)
	}
	rec := &recorder{}
	r := worker.NewWorkflowReplayer()
	RegisterWith(r, rec.options())
	if err := r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: ex.WorkflowID, RunID: ex.RunID}}); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if len(rec.live) != 0 {
		t.Errorf("replay fed %d events live (%v): their spans would be exported twice", len(rec.live), rec.live)
	}
	if rec.started != 1 || len(rec.replay) == 0 || !rec.replay[len(rec.replay)-1].Terminal() {
		t.Errorf("replay started %d recorders and fed %v; want one, fed through the run's end", rec.started, rec.replay)
	}
}

// TestWarningsCarryTraceIDs: the workflow's warnings about a run carry its trace_id and its
// run span's span_id when the run has a trace (started with a traceparent, or traced by the
// worker), so an operator joins them to its spans; a run with no trace gets neither.
func TestWarningsCarryTraceIDs(t *testing.T) {
	const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name, traceParent string
		traced, ids       bool
	}{
		{"started with a traceparent", accepted, false, true},
		{"traced by the worker", "", true, true},
		{"no trace", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setVar(t, &TemporalMaxHistoryEvents, 100)
			setVar(t, &historyUsage, func(workflow.Context) (int, int) { return 90, 0 }) // over WarnAt, under FailAt
			var logs lockedBuffer
			register := Register
			if tc.traced {
				register = func(r Registry) { RegisterWith(r, (&recorder{}).options()) }
			}
			e, _ := newEnvWith(t, &logs, register)
			in := startInput(sim.Head+"steps:\n  - {activity: p.echo, with: 1}\n", nil, nil)
			in.Started.TraceParent = tc.traceParent
			evs := run(t, e, in)
			st, _ := history.DataOf[history.Started](evs[0])
			line := ""
			for l := range strings.SplitSeq(logs.String(), "\n") {
				if strings.Contains(l, "near a structural limit") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no warning; logs:\n%s", logs.String())
			}
			traceID, spanID := traceparent.RunIDs(st.RunID, tc.traceParent)
			want := "trace_id=" + traceID + " span_id=" + spanID
			if got := strings.Contains(line, want); got != tc.ids || (!tc.ids && strings.Contains(line, "trace_id=")) {
				t.Errorf("warning %q: has %q = %v, want %v", line, want, got, tc.ids)
			}
			if tc.traceParent != "" && !strings.Contains(line, "trace_id=4bf92f3577b34da6a3ce929d0e0e4736") {
				t.Errorf("warning %q: not in the traceparent's trace", line)
			}
		})
	}
}

// TestTracedChildJoinsParentTrace: on a worker that traces, a child of a run started without
// a traceparent starts in the parent's derived trace under its run_workflow step's span, as
// a local child does while traces are exported.
func TestTracedChildJoinsParentTrace(t *testing.T) {
	src := sim.Head + "steps:\n  - id: c\n    run_workflow: ./child.wend.yaml\n    with: {n: 3}\n"
	e, _ := newEnvWith(t, os.Stderr, func(r Registry) { RegisterWith(r, (&recorder{}).options()) })
	evs := run(t, e, startInput(src, nil, childSpecs))
	parent, _ := history.DataOf[history.Started](evs[0])
	child, _ := history.DataOf[history.Started](queryEventsOf(t, e, childIDOf(t, evs, "steps[0]"))[0])
	if want := traceparent.ForChild(parent.RunID, "", "steps[0]"); child.TraceParent != want {
		t.Fatalf("child started with traceparent %q, want %q", child.TraceParent, want)
	}
}
