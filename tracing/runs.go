package tracing

import (
	"github.com/wendflow/wend/history"
)

// RunSpans builds the spans of one run from its events, for a process that records the run's
// history itself instead of committing it to a store the observer watches: a Temporal
// workflow's code. The caller feeds every event in order, the replayed ones too (they rebuild
// what is open), and says which are new: only those emit. Its spans have the ids, names and
// attributes the observer gives the same events, so the tree is the same as a local run's.
// Tries are not its: the process that runs a try exports it (EmitTry).
//
// A RunSpans is one run's alone and is not safe for concurrent use.
type RunSpans struct {
	o   *Observer // its span builder, without a queue: Record builds at once
	rt  *runTrace
	run history.Run
}

// RunSpans starts the spans of the run whose WorkflowStarted event is started; run names it
// (Name, WorkflowID, RunID). It returns nil, whose Record does nothing, on a nil provider.
func (p *Provider) RunSpans(run history.Run, started history.Event) *RunSpans {
	if p == nil {
		return nil
	}
	o := &Observer{out: p.out(), runs: map[string]*runTrace{}, noTries: true, stepIDs: p.stepIDs}
	run.StartedAt = started.Time
	return &RunSpans{o: o, rt: o.begin(run.RunID, started), run: run}
}

// Record moves the run by ev, the next event of its history after WorkflowStarted, and
// exports the spans ev ends when live: ev is new, not a replay of an event whose spans were
// exported when it was new.
func (r *RunSpans) Record(ev history.Event, live bool) {
	if r == nil || r.rt == nil {
		return
	}
	r.o.apply(r.rt, &r.run, &ev, live)
	if ev.Type.Terminal() {
		r.rt = nil // the run is closed: what follows (none) is not its
	}
}
