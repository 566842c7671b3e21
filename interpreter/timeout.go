package interpreter

import (
	"fmt"
	"sort"
	"time"

	"github.com/wendflow/wend/history"
)

// Workflow timeout kinds (WorkflowTimedOut's timeout_kind).
const (
	ExecutionTimeout = "execution_timeout"
	RunTimeout       = "run_timeout"
)

// armTimeouts schedules the workflow's deadlines as durable timers: `run` from this run's
// start, `execution` from the first run of the workflow id (it spans continue-as-new). A
// deadline that passed while wend was down fires as soon as the timer is re-armed.
func (r *Run) armTimeouts(runStart, executionStart time.Time) {
	if d := r.w.Timeouts.Execution.D; d > 0 {
		if executionStart.IsZero() {
			executionStart = runStart
		}
		r.armTimeout("workflow#"+ExecutionTimeout, ExecutionTimeout, executionStart.Add(d))
	}
	if d := r.w.Timeouts.Run.D; d > 0 {
		r.armTimeout("workflow#"+RunTimeout, RunTimeout, runStart.Add(d))
	}
}

func (r *Run) armTimeout(id, kind string, at time.Time) {
	put(&r.wfTimers, id, runTimer{kind: kind, at: at.UTC()})
	r.emit(history.Event{Type: history.TimerScheduled,
		Data: history.MustData(history.TimerSchedule{TimerID: id, FireAt: at.UTC(), Purpose: kind})})
}

// disarmTimeouts cancels the deadlines of a run that is closing, so no timer task outlives it.
func (r *Run) disarmTimeouts() {
	ids := make([]string, 0, len(r.wfTimers))
	for id := range r.wfTimers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		delete(r.wfTimers, id)
		r.emit(history.Event{Type: history.TimerCancelled, Data: history.MustData(history.TimerRef{TimerID: id})})
	}
}

// timeOut ends the run at a passed deadline: open activities and timers are cancelled, the
// failure is recorded with category timeout, and the run closes with WorkflowTimedOut.
func (r *Run) timeOut(kind string) {
	if r.root != nil {
		r.root.cancel()
	}
	if r.compensating != nil {
		r.compensating.cancel()
	}
	limit := r.w.Timeouts.Run.D
	if kind == ExecutionTimeout {
		limit = r.w.Timeouts.Execution.D
	}
	f := &history.Failure{Category: history.CategoryTimeout, PropagationKind: "timeout", Type: "WorkflowTimeout",
		Message: fmt.Sprintf("workflow exceeded its %s of %s", kind, limit)}
	r.close(history.WorkflowTimedOut, history.Closed{Failure: f, TimeoutKind: kind})
}
