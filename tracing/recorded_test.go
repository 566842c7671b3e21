package tracing

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

var updateRecorded = flag.Bool("update-recorded", false, "rewrite testdata/recorded.spans from the recorded histories (and record them if missing)")

// recordedRun is a run's identity and its committed history, as kept in testdata.
type recordedRun struct {
	Name, WorkflowID, RunID string
	StartedAt               time.Time
	Events                  []history.Event
}

// TestSpansOfRecordedHistories: the spans exported for histories recorded once (tries, a
// retry and a failure in a caller's trace; a delay, an activity and a timed-out signal wait
// in a trace of the run's own; steps open at once, one of them retried) are, field by field
// and in export order, the ones kept in testdata: a change to how spans are built changes no
// span unless this file changes too.
func TestSpansOfRecordedHistories(t *testing.T) {
	const waits = "wend: v1\nname: order\nplugins: {p: ./p}\nsteps:\n  - {id: d, delay: 1ms}\n  - {id: a, activity: p.echo, with: 1}\n  - {id: n, wait_for_signal: never, timeout: 1ms, catch: {steps: []}}\n"
	const parallel = "wend: v1\nname: fan\nplugins: {p: ./p}\nsteps:\n  - parallel:\n      - {activity: p.echo, with: 1}\n      - {activity: p.flaky, retry: {tries: 2, backoff: [10ms]}}\n      - {activity: p.echo, with: 3}\n  - {activity: p.echo, with: 4}\n"
	sources := []struct{ src, traceparent string }{{workflow, accepted}, {waits, ""}, {parallel, ""}}
	histories := filepath.Join("testdata", "recorded.events.json")
	golden := filepath.Join("testdata", "recorded.spans")
	var runs []recordedRun
	data, err := os.ReadFile(histories)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &runs); err != nil {
			t.Fatal(err)
		}
	case !os.IsNotExist(err) || !*updateRecorded:
		t.Fatal(err)
	}
	if *updateRecorded && len(runs) < len(sources) { // record the histories not kept yet
		for _, s := range sources[len(runs):] {
			runs = append(runs, record(t, s.src, s.traceparent))
		}
		data, err := json.MarshalIndent(runs, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(histories, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	exp := &copyingExporter{}
	p := batched(nil, true, noEnv, exp)
	o := p.NewObserver(func(id string) ([]history.Event, error) {
		for _, r := range runs {
			if r.RunID == id {
				return r.Events, nil
			}
		}
		return nil, fmt.Errorf("no run %s", id)
	}, t.Logf)
	for _, r := range runs {
		run := history.Run{Name: r.Name, WorkflowID: r.WorkflowID, RunID: r.RunID, StartedAt: r.StartedAt}
		for _, ev := range r.Events {
			o.Observe(run, ev)
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, s := range exp.spans {
		writeSpan(&got, s)
	}
	if *updateRecorded {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("spans exported:\n%s\nwant (%s):\n%s", got.String(), golden, want)
	}
	if n := strings.Count(string(want), "\n"); n != 23 {
		t.Errorf("%s has %d spans, want the 8, 5 and 10 of the three runs", golden, n)
	}
}

// record runs src to its end on an engine and returns its history.
func record(t *testing.T, src, traceparent string) recordedRun {
	store := history.NewMemStore()
	e := enginetest.New(t, engine.Options{Store: store, Activities: &acts{}, TraceContext: true})
	defer e.Close()
	start(t, e, src, traceparent)
	run := waitClosed(t, e)
	evs, err := store.Events(run.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recordedRun{Name: run.Name, WorkflowID: run.WorkflowID, RunID: run.RunID, StartedAt: run.StartedAt, Events: evs}
}

// writeSpan writes one line of s: every field an exporter reads but the resource (the SDK's
// version is in it).
func writeSpan(w *strings.Builder, s tracetest.SpanStub) {
	fmt.Fprintf(w, "%q trace=%s span=%s flags=%s state=%q parent=%s/%s/%s remote=%v kind=%s start=%s end=%s status=%s/%q scope=%q",
		s.Name, s.SpanContext.TraceID(), s.SpanContext.SpanID(), s.SpanContext.TraceFlags(), s.SpanContext.TraceState().String(),
		s.Parent.TraceID(), s.Parent.SpanID(), s.Parent.TraceFlags(), s.Parent.IsRemote(), s.SpanKind,
		s.StartTime.UTC().Format(time.RFC3339Nano), s.EndTime.UTC().Format(time.RFC3339Nano), s.Status.Code, s.Status.Description,
		s.InstrumentationScope.Name)
	for _, kv := range s.Attributes {
		fmt.Fprintf(w, " %s=%s:%q", kv.Key, kv.Value.Type(), kv.Value.String())
	}
	fmt.Fprintf(w, " events=%d links=%d dropped=%d/%d/%d children=%d\n", len(s.Events), len(s.Links),
		s.DroppedAttributes, s.DroppedEvents, s.DroppedLinks, s.ChildSpanCount)
}
