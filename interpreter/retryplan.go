package interpreter

import (
	"errors"

	"github.com/wendflow/wend/history"
)

// Why a failed run cannot resume; an engine words each as its refusal.
var (
	ErrRetryCompensated = errors.New("the run was compensated after it failed; its completed steps were undone, so it cannot resume")
	ErrRetryNoActivity  = errors.New("the run did not fail in an activity; retry resumes only from a failed activity")
)

// RetryPlan is what a retry of a failed run keeps: its history up to the failed activity's
// last try, the WorkflowStarted payload of the new run, and the activity to try again.
type RetryPlan struct {
	// Prefix is a copy of the failed run's events before the failed try's input. Its first
	// event still carries the failed run's WorkflowStarted payload: the engine that starts
	// the new run puts Started (with the new run id) in its place and renumbers nothing,
	// since the prefix starts at seq 1.
	Prefix []history.Event
	// Started is the new run's payload: RetryOf the failed run, ExecBase kept (so retried
	// and copied steps keep their idempotency keys), RunStarted kept (so the run timeout
	// spans the retry). RunID is left for the engine to set.
	Started history.Started
	// ActivityExecID is the failed activity's activity_execution_id, for RetryRequested.
	ActivityExecID string
}

// PlanRetry decides what a retry of the failed run runID, whose whole history is evs, keeps.
// It is the one rule the local engine and the Temporal backend share, so a retried run's
// history is the same on both. The caller checks the run's status (failed, not timed out)
// first; the errors here are ErrRetryCompensated and ErrRetryNoActivity.
func PlanRetry(runID string, evs []history.Event) (RetryPlan, error) {
	for _, ev := range evs {
		if ev.Type == history.CompensationStarted {
			return RetryPlan{}, ErrRetryCompensated
		}
	}
	execID, cut := FailedActivity(evs)
	if execID == "" {
		return RetryPlan{}, ErrRetryNoActivity
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return RetryPlan{}, err
	}
	if st.ExecBase == "" {
		st.ExecBase = st.RunID
	}
	if st.RunStarted.IsZero() {
		st.RunStarted = evs[0].Time
	}
	st.RetryOf, st.RunID = runID, ""
	return RetryPlan{Prefix: append([]history.Event(nil), evs[:cut]...), Started: st, ActivityExecID: execID}, nil
}
