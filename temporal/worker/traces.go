package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/tracing"
	"go.temporal.io/sdk/activity"
)

// traceTry gives call the try's traceparent, as the local engine does: when the run was
// started with one, or when this worker exports traces (then derived from the run id). It
// returns the function that exports the try's span once the try has ended (a no-op when the
// worker exports no traces). The span starts when the try was scheduled, which for wend is
// when it became due (Temporal's own retries are off).
func (a *Activities) traceTry(ctx context.Context, in wire.Call, call *history.ActivityCall) func(err error, build string) {
	if in.RunTraceParent != "" || a.Traces != nil {
		call.TraceParent = tracing.TryParent(call.RunID, in.RunTraceParent, call.ActivityExecutionID, call.Attempt)
	}
	if a.Traces == nil && (a.Log == nil || call.TraceParent == "") {
		return func(error, string) {}
	}
	start := activity.GetInfo(ctx).ScheduledTime
	if start.IsZero() {
		start = time.Now()
	}
	return func(err error, build string) {
		outcome, failure := tryOutcome(ctx, in, err)
		if a.Traces != nil {
			a.Traces.EmitTry(tracing.Try{Workflow: in.Workflow, Call: *call, Start: start, End: time.Now(),
				Outcome: outcome, Failure: failure, PluginSHA256: build})
		}
		a.logTry(*call, outcome, failure)
	}
}

// logTry writes a line about a try that did not complete, with the try's trace_id and
// span_id, so an operator finds its span (and the run's) from the log. A try that completed
// gets none: its span says it.
func (a *Activities) logTry(call history.ActivityCall, outcome string, failure *history.Failure) {
	traceID, spanID, ok := tracing.LogIDs(call.TraceParent)
	if a.Log == nil || !ok || outcome == "completed" {
		return
	}
	msg := ""
	if failure != nil {
		msg = ": " + strings.ReplaceAll(failure.Error(), "\n", " ") // one line per try
	}
	fmt.Fprintf(a.Log, "wend worker: run %s (%s) %s: try %d of %s.%s %s%s trace_id=%s span_id=%s\n", call.RunID, call.WorkflowID,
		call.StepPath, call.Attempt, call.Plugin, call.Activity, outcome, msg, traceID, spanID)
}

// tryOutcome is how the driver will record a try that ended with err (its tryOutcome): the
// outcome and failure the local engine's try span has.
func tryOutcome(ctx context.Context, in wire.Call, err error) (string, *history.Failure) {
	if err == nil {
		return "completed", nil
	}
	var ae *history.ActivityError
	switch {
	case errors.As(err, &ae) && ae.Type == wire.WorkerStopped:
		if !in.Liveness { // a run from before liveness records it as a failure
			return "failed", &history.Failure{Category: ae.Category, Type: ae.Type, Message: ae.Message}
		}
		return "interrupted", &history.Failure{Type: "Interrupted", Message: ae.Message}
	case errors.As(err, &ae) && ae.Category == history.CategoryTimeout:
		return "timed_out", &history.Failure{Category: ae.Category, Type: ae.Type, Message: ae.Message}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// Temporal's start-to-close timeout: the step's timeout, recorded by the driver.
		return "timed_out", &history.Failure{Category: history.CategoryTimeout, Type: "timeout",
			Message: fmt.Sprintf("attempt %d exceeded its timeout", in.Attempt)}
	case ctx.Err() != nil:
		return "cancelled", nil // wend cancelled the try
	case errors.As(err, &ae):
		cat := ae.Category
		if cat == "" { // a plugin's own error, as the driver records it
			cat = history.CategoryActivity
		}
		return "failed", &history.Failure{Category: cat, Type: ae.Type, Message: ae.Message}
	}
	return "failed", &history.Failure{Category: history.CategoryInternal, Type: "WorkerError", Message: err.Error()}
}
