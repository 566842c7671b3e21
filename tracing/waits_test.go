package tracing

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/otlptest"
)

const parentWorkflow = `wend: v1
name: order
plugins: {p: ./p}
steps:
  - {id: d, delay: 10ms}
  - {id: k, run_workflow: ./kid.wend.yaml}
  - {id: s, wait_for_signal: go}
  - {id: g, wait_for_signal: go2, timeout: 1h}
  - {id: n, wait_for_signal: never, timeout: 10ms, catch: {steps: []}}
`

const kidWorkflow = "wend: v1\nname: kid\nplugins: {p: ./p}\nsteps:\n  - {id: c, activity: p.echo, with: 1}\n"

// TestSpansOfWaitsAndChildren: a delay, a run_workflow step, and signal waits (with and
// without a timeout, received or timed out) export a span each under the run, from the
// wait's start to its end; the child run's span and its own steps' nest under the
// run_workflow step's span, in the parent's trace.
func TestSpansOfWaitsAndChildren(t *testing.T) {
	rcv := otlptest.Start(t)
	exportTo(t, rcv)
	store := history.NewMemStore()
	te := open(t, store, &acts{})
	dir := t.TempDir()
	f := filepath.Join(dir, "order.wend.yaml")
	for name, src := range map[string]string{f: parentWorkflow, filepath.Join(dir, "kid.wend.yaml"): kidWorkflow} {
		if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run, _, err := te.e.Start(context.Background(), engine.StartRequest{WorkflowID: "w", SpecFile: f, Source: parentWorkflow, TraceParent: accepted})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go", "go2"} {
		if err := te.e.Signal(context.Background(), "w", name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := waitClosed(t, te.e); got.Status != history.StatusCompleted {
		t.Fatalf("run %s, want completed", got.Status)
	}
	te.close(t)

	spans := byWorkflowAndName(t, rcv.Spans())
	want := []struct{ name, parent, kind, outcome, extraKey, extra string }{
		{"order/step steps[0]", "order/run order", "delay", "completed", "", ""},
		{"order/step steps[1]", "order/run order", "run_workflow", "completed", "wend.child_workflow_id", "w/" + run.RunID + "/steps[1]"},
		{"kid/run kid", "order/step steps[1]", "", "completed", "", ""},
		{"kid/step steps[0]", "kid/run kid", "activity", "completed", "", ""},
		{"kid/try p.echo #1", "kid/step steps[0]", "activity", "completed", "", ""},
		{"order/step steps[2]", "order/run order", "wait_for_signal", "received", "wend.signal", "go"},
		{"order/step steps[3]", "order/run order", "wait_for_signal", "received", "wend.signal", "go2"},
		{"order/step steps[4]", "order/run order", "wait_for_signal", "timed_out", "wend.signal", "never"},
	}
	if len(spans) != len(want)+1 { // and the parent's run span
		t.Errorf("%d spans, want %d", len(spans), len(want)+1)
	}
	for _, w := range want {
		s, parent := spans[w.name], spans[w.parent]
		if s == nil || parent == nil {
			t.Errorf("no span %q or its parent %q", w.name, w.parent)
			continue
		}
		if hexID(s.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s: trace %s, want the parent's", w.name, hexID(s.TraceId))
		}
		if hexID(s.ParentSpanId) != hexID(parent.SpanId) {
			t.Errorf("%s: parent %s, want %s (%s)", w.name, hexID(s.ParentSpanId), hexID(parent.SpanId), w.parent)
		}
		if otlptest.Attr(s, "wend.step_kind") != w.kind || otlptest.Attr(s, "wend.outcome") != w.outcome {
			t.Errorf("%s: kind %q outcome %q, want %q %q", w.name, otlptest.Attr(s, "wend.step_kind"), otlptest.Attr(s, "wend.outcome"), w.kind, w.outcome)
		}
		if w.extraKey != "" && otlptest.Attr(s, w.extraKey) != w.extra {
			t.Errorf("%s: %s %q, want %q", w.name, w.extraKey, otlptest.Attr(s, w.extraKey), w.extra)
		}
		if s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("%s: times %d..%d", w.name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
	if s := spans["order/step steps[0]"]; s != nil && time.Duration(s.EndTimeUnixNano-s.StartTimeUnixNano) < 10*time.Millisecond {
		t.Errorf("the delay's span lasts %v, less than the delay", time.Duration(s.EndTimeUnixNano-s.StartTimeUnixNano))
	}
	if s, kid := spans["order/step steps[2]"], spans["order/step steps[1]"]; s != nil && kid != nil && s.StartTimeUnixNano < kid.EndTimeUnixNano {
		t.Errorf("the signal wait starts before the step before it ended: it began when the child's step ended")
	}
	if s := spans["order/step steps[4]"]; s != nil && s.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("the timed-out wait's status %v, want an error", s.GetStatus())
	}
}

// byWorkflowAndName indexes spans by "workflow/name", failing on one seen twice.
func byWorkflowAndName(t *testing.T, spans []*tracepb.Span) map[string]*tracepb.Span {
	t.Helper()
	m := map[string]*tracepb.Span{}
	for _, s := range spans {
		k := otlptest.Attr(s, "wend.workflow") + "/" + s.Name
		if m[k] != nil {
			t.Errorf("span %q exported twice", k)
		}
		m[k] = s
	}
	return m
}

// TestWaitSpansAcrossARestart: a delay that fired in one process is exported by it alone; a
// signal wait begun there and ended in the next process is exported by the next, from when
// the wait began.
func TestWaitSpansAcrossARestart(t *testing.T) {
	rcv := otlptest.Start(t)
	exportTo(t, rcv)
	store := history.NewMemStore()
	src := "wend: v1\nname: order\nsteps:\n  - {delay: 10ms}\n  - {wait_for_signal: go}\n"
	first := open(t, store, &acts{})
	run := start(t, first.e, src, "")
	waitForEvent(t, store, run.RunID, history.TimerFired)
	first.close(t)
	if got := len(rcv.Spans()); got != 1 {
		t.Fatalf("the first process exported %d spans, want 1 (the delay's)", got)
	}

	second := open(t, store, &acts{})
	if _, err := second.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := second.e.Signal(context.Background(), "w", "go", nil); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, second.e); got.Status != history.StatusCompleted {
		t.Fatalf("run %s, want completed", got.Status)
	}
	second.close(t)

	spans := byWorkflowAndName(t, rcv.Spans()) // fails on a span exported twice
	if len(spans) != 3 {
		t.Errorf("%d spans, want 3 (run, delay, signal wait)", len(spans))
	}
	delay, wait := spans["order/step steps[0]"], spans["order/step steps[1]"]
	if delay == nil || wait == nil {
		t.Fatalf("no delay or signal wait span: %v", spans)
	}
	if wait.StartTimeUnixNano > delay.EndTimeUnixNano+uint64(time.Second) || wait.StartTimeUnixNano < delay.EndTimeUnixNano {
		t.Errorf("the wait starts at %d, want when the delay ended (%d), in the first process", wait.StartTimeUnixNano, delay.EndTimeUnixNano)
	}
}

// waitForEvent waits until the run's history has an event of type typ.
func waitForEvent(t *testing.T, store history.Store, runID string, typ history.EventType) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		evs, _ := store.Events(runID, 0)
		for _, ev := range evs {
			if ev.Type == typ {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s in run %s", typ, runID)
}
