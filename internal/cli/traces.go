package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/tracing"
)

// flushWait bounds how long a clean stop waits for the last spans to reach the collector.
const flushWait = 5 * time.Second

// withTraces is the engine's Observe hook: the step lines, and the spans when traces is set.
// Spans go first: they only queue for the exporter, and the lines may print in the
// background anyway.
func (d *driver) withTraces(traces *tracing.Provider, logf func(string, ...any)) func(history.Run, history.Event) {
	if traces == nil {
		return d.prog.observe
	}
	d.traces, d.prog.traces = traces, true
	store := d.store
	obs := traces.NewObserver(func(runID string) ([]history.Event, error) { return store.Events(runID, 0) }, logf)
	d.meter.SetTraceDrops(obs.Dropped)
	return func(run history.Run, ev history.Event) {
		obs.Observe(run, ev)
		d.prog.observe(run, ev)
	}
}

// flushTraces exports the spans still queued, on a clean stop.
func (d *driver) flushTraces() {
	if d.traces == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushWait)
	defer cancel()
	if err := d.traces.Shutdown(ctx); err != nil {
		fmt.Fprintf(d.e.stderr, "wend: traces: the last spans were not exported: %v\n", err)
	}
}
