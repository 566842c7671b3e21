package tracing

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/otlptest"
)

// runSpansWorkflow has activity steps (one retried, one failing) and a delay between them.
const runSpansWorkflow = `wend: v1
name: order
plugins: {p: ./p}
steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: b, activity: p.flaky, retry: {tries: 2, backoff: [10ms]}}
  - {id: d, delay: 10ms}
  - {id: c, activity: p.boom}
`

// TestRunSpansMatchTheObserver: a run's events fed to RunSpans as they are recorded export
// the spans the observer exports of the same committed history, with the same ids, parents,
// names, times, attributes and status, except the tries (the process that runs them exports
// those); events fed as replayed export nothing, and rebuild what the live ones end.
func TestRunSpansMatchTheObserver(t *testing.T) {
	rcv := otlptest.Start(t)
	exportTo(t, rcv)
	store := history.NewMemStore()
	te := open(t, store, &acts{})
	run := start(t, te.e, runSpansWorkflow, accepted)
	waitClosed(t, te.e)
	te.close(t)
	local := map[string]*tracepb.Span{}
	for name, s := range byName(t, rcv.Spans()) {
		if !strings.HasPrefix(name, "try ") {
			local[name] = s
		}
	}
	if len(local) != 5 { // the run, three activity steps, the delay
		t.Fatalf("the observer exported %d spans besides the tries, want 5", len(local))
	}
	evs, err := store.Events(run.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name     string
		replayed int // the events fed as replayed before the rest are fed live
	}{
		{"all live", 1},
		{"replayed up to the delay", indexOf(t, evs, history.TimerScheduled) + 1},
		{"all replayed", len(evs)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := len(rcv.Spans())
			p, err := FromEnv(context.Background(), os.Getenv, io.Discard)
			if err != nil || p == nil {
				t.Fatalf("FromEnv = %v, %v", p, err)
			}
			rs := p.RunSpans(history.Run{Name: run.Name, WorkflowID: run.WorkflowID, RunID: run.RunID}, evs[0])
			for i, ev := range evs[1:] {
				rs.Record(ev, i+1 >= tc.replayed)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			got := byName(t, rcv.Spans()[seen:])
			want := 0
			for name, l := range local {
				if tc.replayed < len(evs) && l.EndTimeUnixNano >= uint64(evs[tc.replayed].Time.UnixNano()) {
					want++ // ended by an event fed live
				}
				if g := got[name]; g != nil {
					sameSpan(t, name, g, l)
				}
			}
			if len(got) != want {
				t.Errorf("exported %d spans, want %d (those the live events end)", len(got), want)
			}
		})
	}
}

func indexOf(t *testing.T, evs []history.Event, typ history.EventType) int {
	t.Helper()
	for i, ev := range evs {
		if ev.Type == typ {
			return i
		}
	}
	t.Fatalf("no %s event", typ)
	return 0
}

// sameSpan fails unless got and want are the same span: ids, parent, times, attributes, status.
func sameSpan(t *testing.T, name string, got, want *tracepb.Span) {
	t.Helper()
	if hexID(got.TraceId) != hexID(want.TraceId) || hexID(got.SpanId) != hexID(want.SpanId) || hexID(got.ParentSpanId) != hexID(want.ParentSpanId) {
		t.Errorf("%s: ids %x/%x under %x, want %x/%x under %x", name, got.TraceId, got.SpanId, got.ParentSpanId,
			want.TraceId, want.SpanId, want.ParentSpanId)
	}
	if got.StartTimeUnixNano != want.StartTimeUnixNano || got.EndTimeUnixNano != want.EndTimeUnixNano {
		t.Errorf("%s: times %v..%v, want %v..%v", name, time.Unix(0, int64(got.StartTimeUnixNano)), time.Unix(0, int64(got.EndTimeUnixNano)),
			time.Unix(0, int64(want.StartTimeUnixNano)), time.Unix(0, int64(want.EndTimeUnixNano)))
	}
	g, w := attrMap(got.Attributes), attrMap(want.Attributes)
	if len(g) != len(w) {
		t.Errorf("%s: attributes %v, want %v", name, g, w)
	}
	for k, v := range w {
		if g[k] != v {
			t.Errorf("%s: %s = %q, want %q", name, k, g[k], v)
		}
	}
	if got.GetStatus().GetCode() != want.GetStatus().GetCode() {
		t.Errorf("%s: status %v, want %v", name, got.GetStatus(), want.GetStatus())
	}
}
