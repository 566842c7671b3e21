package tracing

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

// TestObserveNeverBlocks: with the span builder stuck, Observe returns at once for every
// event; the ones that find the queue full, in number or in bytes, are dropped and counted
// (the event the builder is stuck on is not built yet: it holds one of QueueSize).
func TestObserveNeverBlocks(t *testing.T) {
	p := &Provider{tp: sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(historyIDs{}))}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	o := p.NewObserver(func(string) ([]history.Event, error) {
		once.Do(func() { close(entered) })
		<-release
		return nil, nil
	}, func(string, ...any) {})
	run := history.Run{RunID: "r", Name: "order"}
	o.Observe(run, history.Event{Seq: 5, Type: history.ActivityCompleted}) // not a start: the builder reads history
	<-entered
	big := json.RawMessage(make([]byte, QueueBytes+1))
	o.Observe(run, history.Event{Seq: 6, Type: history.ActivityCompleted, Data: big})
	if got := o.Dropped(); got != 1 {
		t.Fatalf("Dropped() = %d after an event over QueueBytes, want 1", got)
	}
	const extra = 10
	sent := make(chan struct{})
	go func() {
		for i := range QueueSize + extra {
			o.Observe(run, history.Event{Seq: uint64(6 + i), Type: history.ActivityCompleted})
		}
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(time.Minute):
		t.Fatal("Observe blocked on a full queue")
	}
	if got := o.Dropped(); got != 1+extra+1 {
		t.Errorf("Dropped() = %d, want %d", got, 1+extra+1)
	}
	close(release)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestDroppedEventReadBack: a run whose event was dropped reads its state back from the
// history at its next event, so it loses only the spans the dropped event ended: the same
// spans, ids and times as without the drop.
func TestDroppedEventReadBack(t *testing.T) {
	store := history.NewMemStore()
	e := enginetest.New(t, engine.Options{Store: store, Activities: &acts{}})
	run := start(t, e, workflow, "")
	rec := waitClosed(t, e)
	e.Close()
	evs, err := store.Events(run.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	indexOf := func(typ history.EventType, step string) int {
		for i, ev := range evs {
			if ev.Type == typ && ev.Step == step {
				return i
			}
		}
		t.Fatalf("no %s at %s", typ, step)
		return 0
	}
	all := spansOf(t, store, rec, evs, -1)
	if len(all) != 8 {
		t.Fatalf("%d spans without a drop, want 8", len(all))
	}
	tests := []struct {
		name string
		drop int
		lost []string
	}{
		{"a start", indexOf(history.ActivityScheduled, "steps[1]"), nil},
		{"an end", indexOf(history.ActivityCompleted, "steps[0]"), []string{"step steps[0]", "try p.echo #1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := spansOf(t, store, rec, evs, tt.drop)
			want := map[string]string{}
			for name, s := range all {
				want[name] = s
			}
			for _, name := range tt.lost {
				delete(want, name)
			}
			if len(got) != len(want) {
				t.Errorf("%d spans, want %d", len(got), len(want))
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: %s, want %s", name, got[name], w)
				}
			}
		})
	}
}

// spansOf feeds evs but the one at drop to a fresh observer and describes the spans it
// exports by name.
func spansOf(t *testing.T, store history.Store, run history.Run, evs []history.Event, drop int) map[string]string {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	p := &Provider{tp: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(historyIDs{}))}
	o := p.NewObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, t.Logf)
	for i, ev := range evs {
		if i != drop {
			o.Observe(run, ev)
		}
	}
	if err := o.close(context.Background()); err != nil { // the spans are built
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }() // after reading: it empties exp
	out := map[string]string{}
	for _, s := range exp.GetSpans() {
		b, _ := json.Marshal([]any{s.SpanContext.SpanID().String(), s.Parent.SpanID().String(), s.StartTime.UnixNano(), s.EndTime.UnixNano(), s.Attributes})
		out[s.Name] = string(b)
	}
	return out
}

// TestSpansBuiltWithoutAStop: the builder, woken once a batch, still builds every span while
// the process runs: a run's spans reach the exporter without a stop, for a run of a few
// events (the gather timer) and for one of more events than a batch waits for (buildAt).
func TestSpansBuiltWithoutAStop(t *testing.T) {
	for _, steps := range []int{1, buildAt} {
		t.Run(fmt.Sprintf("%d steps", steps), func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			p := &Provider{tp: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(historyIDs{}))}
			store := history.NewMemStore()
			o := p.NewObserver(func(id string) ([]history.Event, error) { return store.Events(id, 0) }, t.Logf)
			e := enginetest.New(t, engine.Options{Store: store, Activities: &acts{}, Observe: o.Observe, MaxActivities: 512})
			defer e.Close()
			defer func() { _ = p.Shutdown(context.Background()) }()
			start(t, e, sequence(steps), "")
			waitClosed(t, e)
			want := 2*steps + 1 // a step and a try span a step, and the run's
			deadline := time.Now().Add(time.Minute)
			for len(exp.GetSpans()) < want && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := len(exp.GetSpans()); got != want {
				t.Fatalf("%d spans exported while running, want %d", got, want)
			}
			if o.Dropped() != 0 {
				t.Errorf("%d events dropped", o.Dropped())
			}
		})
	}
}
