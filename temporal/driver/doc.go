// Package driver runs wend's interpreter inside one generic Temporal workflow, wire.WorkflowType.
// The interpreter decides; the driver turns its decisions into Temporal commands and what
// Temporal reports back into the interpreter's inputs. The wend event list is workflow state,
// rebuilt identically by every replay and served by the paged wire.QueryEvents query, so
// show, history and export read the same format as for local runs.
//
// Everything here runs as workflow code: no goroutines, no clock, no select, no map
// iteration. Commands go on a disconnected context, because the interpreter, not Temporal,
// decides what a cancel stops (compensation and on_cancel still run after one).
//
// Mapping:
//
//   - ActivityScheduled: activity wire.ActivityCallBuild (wire.ActivityCall in runs started
//     before the "plugin-build" version marker) with a history.ActivityCall, ActivityID =
//     interpreter.TaskID, Temporal retries off, StartToClose = the step's timeout
//     (DefaultStartToClose when none), HeartbeatTimeout = wire.LivenessTimeout: the worker
//     beats for every try and enforces the step's heartbeat_timeout itself, so a heartbeat
//     timeout is a dead worker, recorded as ActivityAttemptInterrupted (a redelivery, not a
//     try). Runs from before the "liveness-redelivery" marker: the step's heartbeat timeout,
//     else wire.DefaultHeartbeatTimeout, and a heartbeat timeout is a timeout of the try.
//   - ActivityRetryScheduled: a Temporal timer until available_at, then the next try; wend
//     keeps the backoff list, jitter, non_retryable and attempt numbers.
//   - TimerScheduled / TimerCancelled / ActivityCancelled: timers and cancels.
//   - ChildWorkflowScheduled: a child of the same type with the parent's spec texts,
//     ParentClosePolicy terminate; ChildWorkflowCancelRequested cancels it, and the parent
//     waits for a cancelled child to finish before it closes. A shard child (ChildSchedule.Shard,
//     a slice of a sharded for_each) runs this run's own spec text, its input not checked
//     against the input schema: it is the slice, not the workflow's input.
//   - WorkflowWaitScheduled: activity wire.ActivityAwait, cancelled when the step stops waiting.
//   - Inputs: wire.SignalName signals (resends dropped by signal id), Temporal's cancel
//     (reason from a prior wire.CancelSignalName signal), outcomes (stale ones dropped by
//     Run.Expects / Run.Awaits), Temporal's own history count (StructuralLimitReached).
//   - A retry (wire.StartInput.Prefix set by wend retry): the failed run's prefix is replayed,
//     not acted on, then RetryRequested, then every piece of Run.Pending() work is started as
//     the decision that opened it would have been (see resume).
//   - Search fields: after the start and after each input that changes one, the run's
//     search values (Run.SearchValues) are set as the custom search attributes
//     spec.TemporalSearchAttribute names, typed by the field, unset when a field loses its
//     value; only those the namespace had at start (wire.StartInput.SearchAttributes), under
//     the "search-attributes" version marker (search.go).
//   - Traces: with Options.Spans (RegisterWith) each recorded wend event goes to the run's
//     span recorder, marked new only when Temporal is not replaying it, so a span is
//     exported once per event of Temporal's history whatever evicts or moves the workflow;
//     the recorder is a side effect outside workflow state (spans.go).
//   - The run's end: output; ContinueAsNewError with the same spec texts; Temporal's
//     Canceled for a cancelled run; otherwise a non-retryable ApplicationError whose type is
//     the wend terminal event type and whose detail is its history.Closed.
//
// What differs from a local run: a worker that dies mid-try is noticed when its heartbeat
// stops (wire.LivenessTimeout) and the try is redelivered under the next attempt number,
// recorded as interrupted and not counted against the retries, where the local engine re-runs
// the same attempt at its restart (runs from before the "liveness-redelivery" marker lose
// that try instead); event times are workflow
// task times; a child runs the spec text its parent started with; an activity call over
// Temporal's payload limit (MaxPayloadBytes) fails its step with structural_limit.
package driver
