package closing

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wendflow/wend/history"
	"go.temporal.io/sdk/temporal"
)

// TestOf maps each way a wend.v1 run can end, as the client's Get reports it, to the wend
// status and closed reason a local run would have.
func TestOf(t *testing.T) {
	failed := history.Closed{Failure: &history.Failure{Category: history.CategoryActivity, Message: "bank down"}}
	compFailed := history.Closed{ClosedReason: history.ClosedCompensationFailed, Failure: &history.Failure{Message: "x"}}
	cases := []struct {
		name           string
		out            json.RawMessage
		err            error
		status, reason string
		ok             bool
	}{
		{"completed", json.RawMessage(`{"a":1}`), nil, history.StatusCompleted, history.ClosedCompleted, true},
		{"failed", nil, temporal.NewNonRetryableApplicationError("bank down", string(history.WorkflowFailed), nil, failed), history.StatusFailed, history.ClosedFailed, true},
		{"timed out (wend's timer)", nil, temporal.NewNonRetryableApplicationError("late", string(history.WorkflowTimedOut), nil, history.Closed{TimeoutKind: "run_timeout"}), history.StatusFailed, history.ClosedTimedOut, true},
		{"compensation failed", nil, temporal.NewNonRetryableApplicationError("x", string(history.WorkflowFailed), nil, compFailed), history.StatusFailed, history.ClosedCompensationFailed, true},
		{"panic in the driver", nil, temporal.NewApplicationError("boom", "PanicError"), history.StatusFailed, history.ClosedFailed, true},
		{"cancelled", nil, temporal.NewCanceledError(), history.StatusCancelled, history.ClosedCancelled, true},
		{"client gave up", nil, context.DeadlineExceeded, "", "", false},
		{"other", nil, errors.New("connection refused"), "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, reason, closed, ok := Of(c.out, c.err)
			if ok != c.ok || status != c.status || reason != c.reason {
				t.Fatalf("Of = %q (%q), ok %v; want %q (%q), ok %v", status, reason, ok, c.status, c.reason, c.ok)
			}
			if ok && status != history.StatusCompleted && reason != history.ClosedTimedOut && closed.Failure == nil {
				t.Fatal("a run that did not complete has no failure")
			}
		})
	}
}
