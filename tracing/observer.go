package tracing

import (
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
)

// Observer turns committed events into spans, off the commit path: Observe, the engine's
// Observe hook, only queues the event (queue.go), and one goroutine builds the spans in
// commit order and hands them to the batch processor, which exports them in the background.
type Observer struct {
	out spanOut
	// history reads a run's events, for a run whose first event this process sees is not its
	// WorkflowStarted (it was started by an earlier process) or after a dropped event: what
	// came before is read back to know when its open steps, tries and waits started, and
	// emits nothing.
	history func(runID string) ([]history.Event, error)
	logf    func(format string, args ...any)

	q       eventQueue
	dropped atomic.Uint64

	runs map[string]*runTrace // open runs by run id; the builder's alone
	last *runTrace            // the run of the event built last, while open: most events are its
	// The builder's own, kept across runs so that a step allocates little besides its spans:
	// one copy of each name and payload string it has made (texts), and the records of
	// closed steps (freeSteps), reused by the next.
	texts     texts
	freeSteps []*stepTrace

	// noTries leaves try spans out, for runs whose tries another process exports (RunSpans).
	noTries bool
	// stepIDs is the Provider's (NameSteps) when the observer was made.
	stepIDs func(history.Started) map[string]string
}

// NewObserver makes an observer of p's tracer and starts its span builder; events reads a
// run's committed history. p's Shutdown drains and stops it.
func (p *Provider) NewObserver(events func(runID string) ([]history.Event, error), logf func(format string, args ...any)) *Observer {
	return p.newObserver(events, logf, gatherFor, buildAt)
}

func (p *Provider) newObserver(events func(runID string) ([]history.Event, error), logf func(format string, args ...any), gather time.Duration, buildAt int) *Observer {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	o := &Observer{out: p.out(), history: events, logf: logf, q: newEventQueue(gather, buildAt), runs: map[string]*runTrace{}, stepIDs: p.stepIDs}
	if p.batcher != nil {
		o.out.held = &heldSpans{batcher: p.batcher}
	}
	p.mu.Lock()
	p.observers = append(p.observers, o)
	p.mu.Unlock()
	go o.work()
	return o
}

type runTrace struct {
	id      string                   // the run's id
	trace   tracecontext.TraceParent // the trace, and the accepted parent span when remote
	remote  bool
	runSpan [8]byte // the run span's id, the parent of its steps' spans
	next    uint64  // the seq of the event expected next; another means one was dropped
	// The open activity steps: the one opened when none was (step, by execution id stepExec),
	// as a sequence's is, and the others by execution id; a map of one costs a step its hash
	// three times.
	step     *stepTrace
	stepExec string
	steps    map[string]*stepTrace
	waits    map[string]*waitTrace // open delays, signal waits and child steps (waits.go)
	ids      map[string]string     // the spec's step ids by static path (Provider.NameSteps); nil: none known
}

type stepTrace struct {
	path, plugin, activity string
	start                  time.Time
	tryStart               time.Time // when the current try became due
	tryOpen                bool
	spanID                 [8]byte // the step span's id, once a span needed it (stepSpanID)
}

// stepSpanID is st's span id, the parent of its tries' spans, derived once.
func (st *stepTrace) stepSpanID(runID, execID string) [8]byte {
	if st.spanID == ([8]byte{}) {
		st.spanID = tracecontext.StepSpanID(runID, execID)
	}
	return st.spanID
}

// observe applies ev, emitting the spans it ends; a run first seen here, or one that lost
// an event to a full queue, is first read back from its history.
func (o *Observer) observe(run *history.Run, ev *history.Event) {
	rt := o.last
	if rt == nil || rt.id != run.RunID {
		rt = o.runs[run.RunID]
	}
	if rt == nil || ev.Seq != rt.next {
		o.end(run.RunID)
		if rt = o.load(run, ev); rt == nil {
			return
		}
	}
	rt.next = ev.Seq + 1
	o.last = rt
	o.apply(rt, run, ev, true)
}

// end forgets the run runID.
func (o *Observer) end(runID string) {
	if o.last != nil && o.last.id == runID {
		o.last = nil
	}
	delete(o.runs, runID)
}

// load makes the trace state of a run first seen at ev: from ev itself when it starts the
// run, else from the history before it, applied without emitting.
func (o *Observer) load(run *history.Run, ev *history.Event) *runTrace {
	if ev.Type == history.WorkflowStarted {
		return o.begin(run.RunID, *ev)
	}
	evs, err := o.history(run.RunID)
	if err != nil || len(evs) == 0 || evs[0].Type != history.WorkflowStarted {
		o.logf("wend: traces: run %s: cannot read its history (%v): its spans before this event are not exported", run.RunID, err)
		return nil
	}
	rt := o.begin(run.RunID, evs[0])
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq >= ev.Seq {
			break
		}
		o.apply(rt, run, &evs[i], false)
	}
	return rt
}

func (o *Observer) begin(runID string, started history.Event) *runTrace {
	var st history.Started
	if o.stepIDs != nil {
		st, _ = history.DataOf[history.Started](started)
	} else {
		// Only the traceparent: decoding the whole start would copy the spec's text and the input.
		st.TraceParent = startedTraceParent(started.Data)
	}
	tp, remote := tracecontext.ForRun(runID, st.TraceParent)
	rt := &runTrace{id: runID, trace: tp, remote: remote, runSpan: tracecontext.RunSpanID(runID), waits: map[string]*waitTrace{}}
	if o.stepIDs != nil {
		rt.ids = o.stepIDs(st)
	}
	o.runs[runID] = rt
	return rt
}

// apply moves rt by ev, emitting the spans ev ends when emit is set (a live commit).
func (o *Observer) apply(rt *runTrace, run *history.Run, ev *history.Event, emit bool) {
	switch ev.Type {
	case history.ActivityScheduled:
		// Only the names: decoding the whole schedule would copy the step's input.
		plugin, activity := scheduleNames(ev.Data, &o.texts)
		st := o.newStep()
		*st = stepTrace{path: ev.Step, plugin: plugin, activity: activity, start: ev.Time, tryStart: ev.Time, tryOpen: true}
		rt.open(ev.ActivityExecutionID, st)
	case history.ActivityRetryScheduled:
		if st := rt.stepOf(ev.ActivityExecutionID); st != nil {
			rs, _ := history.DataOf[history.RetrySchedule](*ev)
			st.tryStart, st.tryOpen = ev.Time, true
			if rs.AvailableAt.After(ev.Time) {
				st.tryStart = rs.AvailableAt
			}
		}
	case history.ActivityCompleted, history.ActivityAttemptFailed, history.ActivityTimedOut,
		history.ActivityAttemptInterrupted, history.ActivityFailed, history.ActivityCancelled:
		o.activityEnd(rt, run, ev, emit)
	default:
		if o.applyWait(rt, run, ev, emit) {
			return
		}
		if ev.Type.Terminal() {
			o.endWaits(rt, run, ev.Time, emit)
			if emit {
				o.runSpan(rt, run, ev)
			}
			o.end(run.RunID)
		}
	}
}

// open keeps st, the step of execution exec, open.
func (rt *runTrace) open(exec string, st *stepTrace) {
	if rt.step == nil || rt.stepExec == exec {
		rt.step, rt.stepExec = st, exec
		delete(rt.steps, exec) // (a map of none, or an execution scheduled again)
		return
	}
	if rt.steps == nil {
		rt.steps = map[string]*stepTrace{}
	}
	rt.steps[exec] = st
}

// stepOf is the open step of execution exec, nil if none is.
func (rt *runTrace) stepOf(exec string) *stepTrace {
	if rt.step != nil && rt.stepExec == exec {
		return rt.step
	}
	return rt.steps[exec]
}

// close forgets the open step of execution exec.
func (rt *runTrace) close(exec string) {
	if rt.step != nil && rt.stepExec == exec {
		rt.step, rt.stepExec = nil, ""
		return
	}
	delete(rt.steps, exec)
}

// activityEnd ends the open try of ev's step, and the step itself when ev is its last event.
func (o *Observer) activityEnd(rt *runTrace, run *history.Run, ev *history.Event, emit bool) {
	st := rt.stepOf(ev.ActivityExecutionID)
	if st == nil {
		return
	}
	outcome, failure := outcomeOf(ev)
	if st.tryOpen {
		st.tryOpen = false
		if emit && !o.noTries {
			o.trySpan(rt, run, st, ev, outcome, failure)
		}
	}
	switch ev.Type {
	case history.ActivityCompleted, history.ActivityFailed, history.ActivityCancelled:
		rt.close(ev.ActivityExecutionID)
		if emit {
			o.stepSpan(rt, run, st, ev, outcome, failure)
		}
		o.freeStep(st)
	}
}

// newStep is a step record, a closed step's when one is kept.
func (o *Observer) newStep() *stepTrace {
	if n := len(o.freeSteps); n > 0 {
		st := o.freeSteps[n-1]
		o.freeSteps = o.freeSteps[:n-1]
		return st
	}
	return new(stepTrace)
}

// freeStep keeps st, closed, for newStep; a few hundred are enough for the steps that close
// between two that open.
func (o *Observer) freeStep(st *stepTrace) {
	if len(o.freeSteps) < 256 {
		*st = stepTrace{}
		o.freeSteps = append(o.freeSteps, st)
	}
}

func outcomeOf(ev *history.Event) (string, *history.Failure) {
	switch ev.Type {
	case history.ActivityCompleted:
		return "completed", nil
	case history.ActivityAttemptInterrupted:
		in, _ := history.DataOf[history.AttemptInterruption](*ev)
		return "interrupted", &history.Failure{Type: "Interrupted", Message: in.Reason}
	case history.ActivityCancelled:
		return "cancelled", nil
	}
	af, _ := history.DataOf[history.AttemptFailure](*ev)
	if ev.Type == history.ActivityTimedOut {
		return "timed_out", &af.Failure
	}
	return "failed", &af.Failure
}

func (o *Observer) runSpan(rt *runTrace, run *history.Run, ev *history.Event) {
	status, reason := history.ClosedBy(*ev)
	var failure *history.Failure
	if c, err := history.DataOf[history.Closed](*ev); err == nil && c.Failure != nil {
		failure = c.Failure
	}
	var buf attrBuf
	attrs := append(runAttrs(buf[:0], run), attribute.String("wend.outcome", status))
	if reason != "" && reason != status {
		attrs = append(attrs, attribute.String("wend.closed_reason", reason))
	}
	parent := trace.SpanContext{}
	if rt.remote {
		parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: rt.trace.TraceID, SpanID: rt.trace.SpanID,
			TraceFlags: trace.TraceFlags(rt.trace.Flags), Remote: true})
	}
	o.emit(rt, parent, rt.runSpan, "run "+run.Name, run.StartedAt, ev.Time, attrs, failure)
}

func (o *Observer) stepSpan(rt *runTrace, run *history.Run, st *stepTrace, ev *history.Event, outcome string, failure *history.Failure) {
	id, hasID := rt.stepIDAttr(st.path)
	var buf attrBuf
	attrs := withStep(runAttrs(buf[:0], run), st)
	if hasID {
		attrs = append(attrs, id)
	}
	attrs = append(attrs, attribute.String("wend.outcome", outcome))
	o.emit(rt, o.own(rt, rt.runSpan), st.stepSpanID(run.RunID, ev.ActivityExecutionID),
		o.texts.stepName(rt.stepName(st.path)), st.start, ev.Time, attrs, failure)
}

func (o *Observer) trySpan(rt *runTrace, run *history.Run, st *stepTrace, ev *history.Event, outcome string, failure *history.Failure) {
	var sum string
	if ev.Type == history.ActivityCompleted {
		sum = resultBuild(ev.Data, &o.texts)
	}
	var buf attrBuf
	attrs := withStep(runAttrs(buf[:0], run), st)
	attrs = append(attrs, attribute.Int("wend.attempt", ev.Attempt), attribute.String("wend.outcome", outcome))
	if sum != "" {
		attrs = append(attrs, attribute.String("wend.plugin_sha256", sum))
	}
	o.emit(rt, o.own(rt, st.stepSpanID(run.RunID, ev.ActivityExecutionID)),
		tracecontext.TrySpanID(run.RunID, ev.ActivityExecutionID, ev.Attempt),
		o.texts.tryName(st.plugin, st.activity, ev.Attempt), st.tryStart, ev.Time, attrs, failure)
}

// own is the context of a span of the run's own, as a parent.
func (o *Observer) own(rt *runTrace, spanID [8]byte) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: rt.trace.TraceID, SpanID: spanID,
		TraceFlags: trace.TraceFlags(rt.trace.Flags)})
}

func (o *Observer) emit(rt *runTrace, parent trace.SpanContext, spanID [8]byte, name string, start, end time.Time,
	attrs []attribute.KeyValue, failure *history.Failure) {
	o.out.emit(rt.trace.TraceID, parent, spanID, name, start, end, attrs, failure)
}

// attrBuf is where a span's attributes are written as they are made: on the builder's
// stack, so they are copied into the block the span keeps at once (spanOut.emit), not one by
// one into the heap, each write a write barrier while the collector runs.
type attrBuf [blockLen]attribute.KeyValue

// runAttrs appends a run's attributes to attrs.
func runAttrs(attrs []attribute.KeyValue, run *history.Run) []attribute.KeyValue {
	return append(attrs, attribute.String("wend.workflow", run.Name),
		attribute.String("wend.workflow_id", run.WorkflowID), attribute.String("wend.run_id", run.RunID))
}

// withStep appends an activity step's five attributes.
func withStep(attrs []attribute.KeyValue, st *stepTrace) []attribute.KeyValue {
	return append(attrs, attribute.String("wend.step", st.path), attribute.String("wend.step.path", st.path),
		attribute.String("wend.step_kind", kindActivity), attribute.String("wend.plugin", st.plugin), attribute.String("wend.activity", st.activity))
}
