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

// Of maps the result of WorkflowRun.Get (output, error) to a wend status, closed reason and
// Closed payload.
// The driver fails a run with an ApplicationError whose type is the wend terminal event's
// and whose detail is its Closed payload; a cancel ends in Temporal's CanceledError, a
// terminate (no workflow code runs) in TerminatedError. ok is false when err is not a
// workflow's end at all (the client failed, the context ended).
func Of(out json.RawMessage, err error) (status, reason string, c history.Closed, ok bool) {
	t, c, ok := terminal(out, err)
	if !ok {
		return "", "", c, false
	}
	status, reason = history.ClosedBy(history.Event{Type: t, Data: history.MustData(c)})
	return status, reason, c, true
}

// terminal is the wend terminal event a Get result stands for, and its payload.
func terminal(out json.RawMessage, err error) (history.EventType, history.Closed, bool) {
	var c history.Closed
	if err == nil {
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		return history.WorkflowCompleted, history.Closed{Output: out}, true
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
		if c.Failure == nil && t != history.WorkflowTimedOut {
			c.Failure = &history.Failure{Category: history.CategoryInternal, Type: ae.Type(), Message: ae.Message()}
		}
		return t, c, true
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return history.WorkflowCancelled, history.Closed{Failure: &history.Failure{Category: history.CategoryCancelled,
			PropagationKind: "cancelled", Message: "the run was cancelled"}}, true
	}
	var te *temporal.TerminatedError
	if errors.As(err, &te) {
		return history.WorkflowTerminated, history.Closed{Failure: &history.Failure{
			Category: history.CategoryTerminated, PropagationKind: "cancelled", Message: "the run was terminated"}}, true
	}
	var to *temporal.TimeoutError
	if errors.As(err, &to) {
		return history.WorkflowTimedOut, history.Closed{Failure: &history.Failure{
			Category: history.CategoryTimeout, PropagationKind: "timeout", Message: "Temporal timed the run out: " + to.Error()}}, true
	}
	return "", c, false
}
