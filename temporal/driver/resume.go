package driver

import (
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// resume starts a retry run: the failed run's prefix (wire.StartInput.Prefix) is replayed
// under this run's WorkflowStarted payload, so every recorded decision must come out again
// (interpreter.Replay), and none is acted on: it already happened in the failed run. Then
// RetryRequested starts a new series of tries for the failed activity, and the driver
// starts every piece of open work (interpreter.Pending, in its stable order) as it would
// for the decision that opened it. The wend history is the prefix, renumbered from 1 as the
// local retry does, then RetryRequested and what follows.
func (d *driver) resume() error {
	evs := append([]history.Event(nil), d.in.Prefix...)
	if evs[0].Type != history.WorkflowStarted || d.st.RetryOf == "" || d.in.RetryActivity == "" {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"wend: retry start input is incomplete (prefix starts with %s, retry_of %q, retry_activity %q); start the retry with wend retry",
			evs[0].Type, d.st.RetryOf, d.in.RetryActivity), "InvalidRetry", nil)
	}
	if n := encodedSize(d.in); n > MaxPayloadBytes {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"wend: retry of run %s: the start input is %d bytes, over the %d-byte limit", d.st.RetryOf, n, MaxPayloadBytes),
			history.CategoryStructuralLimit, nil)
	}
	evs[0].Data = history.MustData(d.st) // its time stays: decisions after it were timed by it
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	if err := d.r.Replay(evs); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"wend: retry of run %s: its history does not replay with its spec: %v", d.st.RetryOf, err), "InvalidRetry", nil)
	}
	d.events = evs
	d.traceFrom(0, false) // the failed run's events: what they ended was its to trace
	d.record(history.Event{Type: history.RetryRequested,
		Data: history.MustData(history.RetryRequest{ActivityExecID: d.in.RetryActivity, RetryOf: d.st.RetryOf})})
	for _, w := range d.r.Pending() {
		d.reopen(w)
	}
	return nil
}

// reopen starts one piece of open work with the command its decision maps to (see effect).
func (d *driver) reopen(w interpreter.Work) {
	switch w.Kind {
	case history.TaskActivity:
		at := w.At
		if at.IsZero() {
			at = workflow.Now(d.ctx)
		}
		d.startActivity(w.Step, w.ExecID, w.Attempt, at)
	case history.TaskTimer:
		d.startTimer(w.Step, history.TimerSchedule{TimerID: w.TimerID, FireAt: w.At})
	case history.TaskChild:
		cs, _ := history.DataOf[history.ChildSchedule](history.Event{Data: w.Data})
		d.startChild(w.Step, cs)
	case history.TaskWait:
		ws, _ := history.DataOf[history.WaitSchedule](history.Event{Data: w.Data})
		d.startWait(w.Step, ws)
	}
}
