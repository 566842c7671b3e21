package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
	"github.com/wendflow/wend/testkit/otlptest"
)

const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// acts plays the plugins: echo answers its input, flaky fails its first try, boom always
// fails for good, and hold blocks until released or cancelled.
type acts struct {
	mu      sync.Mutex
	flaky   int
	held    chan struct{}
	release chan struct{}
}

func (a *acts) Execute(ctx context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	switch c.Activity {
	case "flaky":
		a.mu.Lock()
		a.flaky++
		n := a.flaky
		a.mu.Unlock()
		if n == 1 {
			return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
		}
	case "boom":
		return nil, &history.ActivityError{Type: "Refused", Message: "card declined", NonRetryable: true}
	case "hold":
		if a.held != nil {
			close(a.held)
			a.held = nil
			select {
			case <-a.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return c.Input, nil
}

type tracedEngine struct {
	e *engine.Engine
	p *Provider
}

// open starts an engine over store that exports its spans to the OTLP receiver the
// environment names, as serve and run do.
func open(t *testing.T, store history.Store, a engine.Activities) tracedEngine {
	t.Helper()
	p, err := FromEnv(context.Background(), os.Getenv, io.Discard)
	if err != nil || p == nil {
		t.Fatalf("FromEnv = %v, %v; want a provider", p, err)
	}
	return openWith(t, store, a, p)
}

// openWith is open on a provider the caller configured.
func openWith(t *testing.T, store history.Store, a engine.Activities, p *Provider) tracedEngine {
	t.Helper()
	obs := p.NewObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, t.Logf)
	e := enginetest.New(t, engine.Options{Store: store, Activities: a, Observe: obs.Observe, TraceContext: true})
	return tracedEngine{e: e, p: p}
}

func (te tracedEngine) close(t *testing.T) {
	t.Helper()
	te.e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := te.p.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func start(t *testing.T, e *engine.Engine, src, traceparent string) history.Run {
	t.Helper()
	f := filepath.Join(t.TempDir(), "w.wend.yaml")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run, _, err := e.Start(context.Background(), engine.StartRequest{WorkflowID: "w", SpecFile: f, Source: src, TraceParent: traceparent})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func waitClosed(t *testing.T, e *engine.Engine) history.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	run, err := e.WaitClosed(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// byName indexes spans by name, failing on a name seen twice.
func byName(t *testing.T, spans []*tracepb.Span) map[string]*tracepb.Span {
	t.Helper()
	m := map[string]*tracepb.Span{}
	for _, s := range spans {
		if m[s.Name] != nil {
			t.Errorf("span %q exported twice", s.Name)
		}
		m[s.Name] = s
	}
	return m
}

const workflow = `wend: v1
name: order
plugins: {p: ./p}
steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: b, activity: p.flaky, retry: {tries: 2, backoff: [10ms]}}
  - {id: c, activity: p.boom}
`

// TestSpanTree: a run started with a traceparent exports, to an OTLP/gRPC receiver, a span
// per run, activity step and try, in the traceparent's trace, each the child of the one
// above it, with their attributes and a failed try's or step's error status.
func TestSpanTree(t *testing.T) {
	rcv := otlptest.Start(t)
	exportTo(t, rcv)
	store := history.NewMemStore()
	te := open(t, store, &acts{})
	run := start(t, te.e, workflow, accepted)
	if got := waitClosed(t, te.e); got.Status != history.StatusFailed {
		t.Fatalf("run %s, want failed", got.Status)
	}
	te.close(t)

	spans := byName(t, rcv.Spans())
	want := []struct{ name, parent, outcome, attempt, failureType string }{
		{"run order", "", "failed", "", "Refused"},
		{"step steps[0]", "run order", "completed", "", ""},
		{"try p.echo #1", "step steps[0]", "completed", "1", ""},
		{"step steps[1]", "run order", "completed", "", ""},
		{"try p.flaky #1", "step steps[1]", "failed", "1", "Busy"},
		{"try p.flaky #2", "step steps[1]", "completed", "2", ""},
		{"step steps[2]", "run order", "failed", "", "Refused"},
		{"try p.boom #1", "step steps[2]", "failed", "1", "Refused"},
	}
	if len(spans) != len(want) {
		names := []string{}
		for n := range spans {
			names = append(names, n)
		}
		t.Fatalf("got %d spans %v, want %d", len(spans), names, len(want))
	}
	for _, w := range want {
		s := spans[w.name]
		if s == nil {
			t.Errorf("no span %q", w.name)
			continue
		}
		if got := hexID(s.TraceId); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s: trace id %s, want the traceparent's", w.name, got)
		}
		parent := "00f067aa0ba902b7" // the run's parent is the caller's span
		if w.parent != "" {
			parent = hexID(spans[w.parent].GetSpanId())
		}
		if got := hexID(s.ParentSpanId); got != parent {
			t.Errorf("%s: parent %s, want %s (%s)", w.name, got, parent, w.parent)
		}
		if got := otlptest.Attr(s, "wend.outcome"); got != w.outcome {
			t.Errorf("%s: outcome %q, want %q", w.name, got, w.outcome)
		}
		if got := otlptest.Attr(s, "wend.attempt"); got != w.attempt {
			t.Errorf("%s: attempt %q, want %q", w.name, got, w.attempt)
		}
		if got := otlptest.Attr(s, "wend.failure.type"); got != w.failureType {
			t.Errorf("%s: failure type %q, want %q", w.name, got, w.failureType)
		}
		if failed := s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR; failed != (w.failureType != "") {
			t.Errorf("%s: status %v, want an error status only on a failure", w.name, s.GetStatus())
		}
		if otlptest.Attr(s, "wend.workflow") != "order" || otlptest.Attr(s, "wend.run_id") != run.RunID {
			t.Errorf("%s: workflow %q run %q", w.name, otlptest.Attr(s, "wend.workflow"), otlptest.Attr(s, "wend.run_id"))
		}
		if s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("%s: times %d..%d", w.name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
	if s := spans["try p.flaky #1"]; s != nil && (otlptest.Attr(s, "wend.plugin") != "p" || otlptest.Attr(s, "wend.activity") != "flaky" || otlptest.Attr(s, "wend.step") != "steps[1]") {
		t.Errorf("try attributes: plugin %q activity %q step %q", otlptest.Attr(s, "wend.plugin"), otlptest.Attr(s, "wend.activity"), otlptest.Attr(s, "wend.step"))
	}
	if s := spans["try p.boom #1"]; s != nil && otlptest.Attr(s, "wend.failure.message") != "card declined" {
		t.Errorf("failure message %q", otlptest.Attr(s, "wend.failure.message"))
	}
	for _, svc := range rcv.Services() {
		if svc != "wend" {
			t.Errorf("service.name %q, want wend", svc)
		}
	}
}

// TestNoSpanTwiceAcrossARestart: a process that stops with a try in flight has exported the
// spans its commits ended; the next process, which replays the run and finishes it, exports
// only the rest, in the same trace (derived from the run id) and tree.
func TestNoSpanTwiceAcrossARestart(t *testing.T) {
	rcv := otlptest.Start(t)
	exportTo(t, rcv)
	store := history.NewMemStore()
	a := &acts{held: make(chan struct{}), release: make(chan struct{})}
	held := a.held
	first := open(t, store, a)
	src := "wend: v1\nname: order\nplugins: {p: ./p}\nsteps:\n  - {id: a, activity: p.echo, with: 1}\n  - {id: b, activity: p.hold}\n"
	run := start(t, first.e, src, "")
	<-held
	first.close(t) // stops with b in flight, as a killed process leaves it
	before := len(rcv.Spans())
	if before != 2 {
		t.Fatalf("the first process exported %d spans, want 2 (step a and its try)", before)
	}

	second := open(t, store, a) // a.held is nil now: hold answers at once
	if _, err := second.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, second.e); got.Status != history.StatusCompleted {
		t.Fatalf("run %s, want completed", got.Status)
	}
	second.close(t)

	spans := byName(t, rcv.Spans()) // fails on a span exported twice
	trace, _ := tracecontext.ForRun(run.RunID, "")
	for _, name := range []string{"run order", "step steps[0]", "try p.echo #1", "step steps[1]", "try p.hold #1", "try p.hold #2"} {
		s := spans[name]
		if s == nil {
			t.Errorf("no span %q", name)
			continue
		}
		if hexID(s.TraceId) != trace.TraceIDString() {
			t.Errorf("%s: trace %x, want the run's derived trace %s", name, s.TraceId, trace.TraceIDString())
		}
	}
	if s := spans["try p.hold #1"]; s != nil && otlptest.Attr(s, "wend.outcome") != "interrupted" {
		t.Errorf("the try in flight at the stop: outcome %q, want interrupted", otlptest.Attr(s, "wend.outcome"))
	}
	if s, step := spans["try p.hold #2"], spans["step steps[1]"]; s != nil && step != nil && hexID(s.ParentSpanId) != hexID(step.SpanId) {
		t.Errorf("the second process's try is not the child of its step")
	}
	if len(spans) != 6 {
		t.Errorf("%d spans, want 6", len(spans))
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name, exporter, protocol string
		on                       bool
		err                      error
	}{
		{"unset", "", "", false, nil},
		{"none", "none", "", false, nil},
		{"console", "console", "", true, nil},
		{"otlp", "otlp", "grpc", true, nil},
		{"otlp over http", "otlp", "http/protobuf", true, nil},
		{"otlp over http/json", "otlp", "http/json", false, ErrConfig},
		{"otlp over carrier pigeon", "otlp", "pigeon", false, ErrConfig},
		{"unknown", "zipkin", "", false, ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"OTEL_TRACES_EXPORTER": tt.exporter, "OTEL_EXPORTER_OTLP_PROTOCOL": tt.protocol}
			p, err := FromEnv(context.Background(), func(k string) string { return env[k] }, io.Discard)
			if !errors.Is(err, tt.err) || (p != nil) != tt.on {
				t.Fatalf("FromEnv = %v, %v; want on %v, error %v", p, err, tt.on, tt.err)
			}
			_ = p.Shutdown(context.Background())
		})
	}
}
