package tracing

import (
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/tracecontext"
)

// waitTrace is an open step that waits without a plugin: a delay's timer, a wait_for_signal
// step or a run_workflow step.
type waitTrace struct {
	kind  string // delay, wait_for_signal, run_workflow
	path  string
	start time.Time
	id    [8]byte
	attrs []attribute.KeyValue
}

// Step kinds, as the wend.step_kind attribute names them.
const (
	kindActivity = "activity"
	kindDelay    = "delay"
	kindSignal   = "wait_for_signal"
	kindChild    = "run_workflow"
)

func timerKey(timerID string) string { return "timer\x00" + timerID }
func signalKey(path string) string   { return "signal\x00" + path }
func childKey(path string) string    { return "child\x00" + path }

// timeoutSuffix ends the id of a wait step's timeout timer (interpreter's scheduleTimeout).
const timeoutSuffix = "#timeout"

// applyWait moves rt's waits by ev; it reports false for an event that is not theirs.
func (o *Observer) applyWait(rt *runTrace, run *history.Run, ev *history.Event, emit bool) bool {
	switch ev.Type {
	case history.TimerScheduled:
		ts, _ := history.DataOf[history.TimerSchedule](*ev)
		switch {
		case ts.Purpose == kindDelay:
			rt.waits[timerKey(ts.TimerID)] = &waitTrace{kind: kindDelay, path: ev.Step, start: ev.Time,
				id:    tracecontext.TimerSpanID(run.RunID, ts.TimerID),
				attrs: []attribute.KeyValue{attribute.String("wend.fire_at", ts.FireAt.UTC().Format(time.RFC3339Nano))}}
		case ts.Signal != "": // a signal wait's timeout starts with the wait
			o.openSignalWait(rt, run, ev.Step, ts.Signal, ev.Time)
		}
	case history.TimerFired:
		ref, _ := history.DataOf[history.TimerRef](*ev)
		if path, ok := strings.CutSuffix(ref.TimerID, timeoutSuffix); ok {
			timedOut := &history.Failure{Category: history.CategoryTimeout, Type: "Timeout", Message: "the step timed out"}
			o.endWait(rt, run, signalKey(path), ev.Time, "timed_out", timedOut, nil, emit)
			o.endWait(rt, run, childKey(path), ev.Time, "timed_out", timedOut, nil, emit)
			return true
		}
		o.endWait(rt, run, timerKey(ref.TimerID), ev.Time, "completed", nil, nil, emit)
	case history.TimerCancelled:
		ref, _ := history.DataOf[history.TimerRef](*ev)
		o.endWait(rt, run, timerKey(ref.TimerID), ev.Time, "cancelled", nil, nil, emit)
	case history.SignalApplied:
		sig, _ := history.DataOf[history.Signal](*ev)
		if rt.waits[signalKey(ev.Step)] == nil {
			if sig.WaitedSince.IsZero() {
				return true // recorded under older rules: when the wait began is unknown
			}
			o.openSignalWait(rt, run, ev.Step, sig.Name, sig.WaitedSince)
		}
		o.endWait(rt, run, signalKey(ev.Step), ev.Time, "received", nil, nil, emit)
	case history.ChildWorkflowScheduled:
		cs, _ := history.DataOf[history.ChildSchedule](*ev)
		rt.waits[childKey(ev.Step)] = &waitTrace{kind: kindChild, path: ev.Step, start: ev.Time,
			id:    tracecontext.ChildSpanID(run.RunID, ev.Step),
			attrs: []attribute.KeyValue{attribute.String("wend.child_workflow_id", cs.WorkflowID)}}
	case history.ChildWorkflowCompleted, history.ChildWorkflowFailed:
		c, _ := history.DataOf[history.Closed](*ev)
		outcome := "completed"
		if ev.Type == history.ChildWorkflowFailed {
			outcome = "failed"
		}
		var more []attribute.KeyValue
		if c.RunID != "" {
			more = append(more, attribute.String("wend.child_run_id", c.RunID))
		}
		o.endWait(rt, run, childKey(ev.Step), ev.Time, outcome, c.Failure, more, emit)
	default:
		return false
	}
	return true
}

func (o *Observer) openSignalWait(rt *runTrace, run *history.Run, path, signal string, since time.Time) {
	rt.waits[signalKey(path)] = &waitTrace{kind: kindSignal, path: path, start: since,
		id: tracecontext.SignalWaitSpanID(run.RunID, path), attrs: []attribute.KeyValue{attribute.String("wend.signal", signal)}}
}

// endWait closes the wait at key, if open, emitting its span when emit is set.
func (o *Observer) endWait(rt *runTrace, run *history.Run, key string, end time.Time, outcome string,
	failure *history.Failure, more []attribute.KeyValue, emit bool) {
	w := rt.waits[key]
	if w == nil {
		return
	}
	delete(rt.waits, key)
	if !emit {
		return
	}
	id, hasID := rt.stepIDAttr(w.path)
	var buf attrBuf
	attrs := append(runAttrs(buf[:0], run), attribute.String("wend.step", w.path),
		attribute.String("wend.step.path", w.path), attribute.String("wend.step_kind", w.kind))
	if hasID {
		attrs = append(attrs, id)
	}
	attrs = append(append(attrs, w.attrs...), more...)
	attrs = append(attrs, attribute.String("wend.outcome", outcome))
	o.emit(rt, o.own(rt, rt.runSpan), w.id, o.texts.stepName(rt.stepName(w.path)), w.start, end, attrs, failure)
}

// endWaits closes the waits still open when the run closes: they ended with it.
func (o *Observer) endWaits(rt *runTrace, run *history.Run, end time.Time, emit bool) {
	keys := make([]string, 0, len(rt.waits))
	for k := range rt.waits {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		o.endWait(rt, run, k, end, "cancelled", nil, nil, emit)
	}
}
