// Package closing reads how a wend.v1 workflow ended from what the Temporal client's Get
// returned: the wend status and the payload of its terminal event. The worker's await
// activity and the CLI backend both need it, and must agree.
package closing

import (
	"encoding/json"
	"errors"

	"github.com/wendflow/wend/history"
	"go.temporal.io/sdk/temporal"
)

// Of maps the result of WorkflowRun.Get (output, error) to a wend status and Closed payload.
// The driver fails a run with an ApplicationError whose type is the wend terminal event's
// and whose detail is its Closed payload; a cancel ends in Temporal's CanceledError, a
// terminate (no workflow code runs) in TerminatedError. ok is false when err is not a
// workflow's end at all (the client failed, the context ended).
func Of(out json.RawMessage, err error) (status string, c history.Closed, ok bool) {
	if err == nil {
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		return history.StatusCompleted, history.Closed{Output: out}, true
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		if ae.HasDetails() {
			_ = ae.Details(&c) // an undecodable detail leaves the message below
		}
		t := history.EventType(ae.Type())
		if !t.Terminal() {
			t = history.WorkflowFailed // failed outside wend's decisions (a panic, a bad start)
		}
		if c.Failure == nil {
			c.Failure = &history.Failure{Category: history.CategoryInternal, Type: ae.Type(), Message: ae.Message()}
		}
		status, _ = history.ClosedBy(history.Event{Type: t, Data: history.MustData(c)})
		return status, c, true
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return history.StatusCancelled, history.Closed{Failure: &history.Failure{Category: history.CategoryCancelled,
			PropagationKind: "cancelled", Message: "the run was cancelled"}}, true
	}
	var te *temporal.TerminatedError
	if errors.As(err, &te) {
		return history.StatusCancelled, history.Closed{ClosedReason: history.ClosedTerminated, Failure: &history.Failure{
			Category: history.CategoryTerminated, PropagationKind: "cancelled", Message: "the run was terminated: " + te.Error()}}, true
	}
	var to *temporal.TimeoutError
	if errors.As(err, &to) {
		return history.StatusFailed, history.Closed{ClosedReason: history.ClosedTimedOut, Failure: &history.Failure{
			Category: history.CategoryTimeout, PropagationKind: "timeout", Message: "Temporal timed the run out: " + to.Error()}}, true
	}
	return "", history.Closed{}, false
}
