package driver

import (
	"errors"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/temporal"
)

// TestTryOutcomeOfStepHeartbeatTimeout: a step's heartbeat_timeout, enforced by the worker
// under liveness, arrives as the worker's ApplicationError and is recorded as the local engine
// records it: ActivityTimedOut, a timeout that propagates as one. A try its stopping worker
// cancelled is interrupted (a redelivery); any other failure is the plugin's and counts as a try.
func TestTryOutcomeOfStepHeartbeatTimeout(t *testing.T) {
	base := history.Event{Step: "s", ActivityExecutionID: "e", Attempt: 1}
	stepTimeout := history.ActivityError{Category: history.CategoryTimeout, Type: "heartbeat_timeout", Message: "attempt 1 exceeded its heartbeat_timeout"}
	cases := []struct {
		name     string
		err      error
		wantType history.EventType
		wantKind string
	}{
		{"step heartbeat_timeout", temporal.NewApplicationError(stepTimeout.Message, stepTimeout.Type, wire.ActivityFailure{Error: stepTimeout}), history.ActivityTimedOut, "timeout"},
		{"plugin failure", temporal.NewApplicationError("boom", "Boom", wire.ActivityFailure{Error: history.ActivityError{Type: "Boom", Message: "boom"}}), history.ActivityAttemptFailed, ""},
		{"other error", errors.New("socket closed"), history.ActivityAttemptFailed, ""},
		{"worker stopped after its grace", temporal.NewApplicationError("stopped", wire.WorkerStopped, wire.ActivityFailure{Error: history.ActivityError{Type: wire.WorkerStopped, Message: "stopped", Category: history.CategoryInternal}}), history.ActivityAttemptInterrupted, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := tryOutcome(base, wire.Result{}, c.err, true)
			last := evs[len(evs)-1]
			if last.Type != c.wantType {
				t.Fatalf("recorded %s, want %s", last.Type, c.wantType)
			}
			if last.Type == history.ActivityAttemptInterrupted {
				return
			}
			f, _ := history.DataOf[history.AttemptFailure](last)
			if f.Failure.PropagationKind != c.wantKind {
				t.Fatalf("propagation kind %q, want %q", f.Failure.PropagationKind, c.wantKind)
			}
		})
	}
}
