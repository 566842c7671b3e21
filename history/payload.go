package history

import (
	"encoding/json"
	"time"
)

// Payloads of events (Event.Data), one type per event family. They are part of the history
// format: add fields, never change the meaning of one.

// Started is WorkflowStarted's payload: everything needed to rebuild the run.
type Started struct {
	WorkflowID  string          `json:"workflow_id"`
	RunID       string          `json:"run_id"`
	Input       json.RawMessage `json:"input"`
	SpecFile    string          `json:"spec_file"`
	SpecSource  string          `json:"spec_source"` // exact file text; resume uses it, never the file
	SpecSHA256  string          `json:"spec_sha256"`
	ParentRunID string          `json:"parent_run_id,omitempty"`
	ParentStep  string          `json:"parent_step,omitempty"`
	// ExecutionStarted is when the workflow id's first run started (continue-as-new keeps it).
	ExecutionStarted time.Time `json:"execution_started"`

	// RetryOf is the failed run this run retries (wend retry): its history up to the failed
	// try is copied into this one. ExecBase, when set, is the run id activity execution ids
	// derive from, so a retried step keeps its idempotency key; RunStarted keeps the original
	// run's start for its run timeout.
	RetryOf    string    `json:"retry_of,omitempty"`
	ExecBase   string    `json:"exec_base,omitempty"`
	RunStarted time.Time `json:"run_started,omitzero"`

	// Rules is the set of decision rules the run was started under (Rules* constants). A
	// history replays under the rules it was recorded with, so a rule can change for new runs
	// without refusing the runs an older wend left in flight.
	Rules int `json:"rules,omitempty"`

	// Shard, on a shard child, names the sharded for_each of the parent's spec (SpecSource is
	// the parent's text) whose body this run runs over the slice in its input (ShardInput).
	Shard *ShardRef `json:"shard,omitempty"`

	// TraceParent is the W3C trace context the run was started with (an API header, `wend run
	// --traceparent`), kept so the run's spans and its plugin calls join the caller's trace
	// after any restart; empty when it was started without one.
	TraceParent string `json:"traceparent,omitempty"`
}

// ShardRef names a slice of a sharded for_each: the step's static path in the spec and the
// position of the slice's first item in the whole list.
type ShardRef struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
}

// ShardInput is a shard child's input: its items and what the body may read of the parent
// run — its input, its state when the for_each started (each only if the body reads it),
// and the loop variables around it.
type ShardInput struct {
	Items []any          `json:"items"`
	Input any            `json:"input,omitempty"`
	State map[string]any `json:"state,omitempty"`
	Vars  map[string]any `json:"vars,omitempty"`
}

// Decision rules, in the order they were introduced; RulesCurrent is what new runs get.
const (
	// RulesLegacy: a run_workflow child's workflow id is the parent's workflow id + "/" + the
	// step path. It repeats across continue_as_new, so a later iteration found the earlier
	// iteration's child and took its old outcome.
	RulesLegacy = 0
	// RulesChildIDsByRun: a child's workflow id is the parent's workflow id + "/" + the exec
	// base (the run id, or for a `wend retry` run the retried run's) + "/" + the step path.
	RulesChildIDsByRun = 1
	// RulesMaxBoundsJitter: an exponential backoff's max bounds the wait with jitter included
	// (before, jitter could add up to jitter*max past it).
	RulesMaxBoundsJitter = 2
	// RulesForEachRoom: a for_each whose items cannot all fit in the history limit fails when
	// it starts, before any item runs (before, it ran until the run reached the limit).
	RulesForEachRoom = 3
	// RulesShardHint: the failure of a for_each that cannot fit suggests `shard: N` (before,
	// it suggested a run_workflow child per batch). The failure's text is part of a recorded
	// decision, so older runs keep the older text.
	RulesShardHint = 4
	// RulesSignalWaitTimes: a wait_for_signal step's SignalApplied records when the wait began
	// (waited_since) and its timeout's TimerScheduled names the signal, so a trace can show the
	// wait; the history has no event of its own at a wait's start.
	RulesSignalWaitTimes = 5

	RulesCurrent = RulesSignalWaitTimes
)

// Failure describes why a step, activity or run failed.
type Failure struct {
	Category        string          `json:"failure_category"` // Category* constants
	PropagationKind string          `json:"propagation_kind"` // how it reached this level: activity, step, child_workflow, timeout, cancelled
	Type            string          `json:"type,omitempty"`
	Message         string          `json:"message"`
	NonRetryable    bool            `json:"non_retryable"`
	Step            string          `json:"step,omitempty"`
	ActivityExecID  string          `json:"activity_execution_id,omitempty"`
	Attempt         int             `json:"attempt,omitempty"`
	Details         json.RawMessage `json:"details,omitempty"`
	// NextRetryDelayMS is a plugin's ActivityError.NextRetryDelayMS: recorded on the try's
	// failure, so a replay computes the same retry wait.
	NextRetryDelayMS int64 `json:"next_retry_delay_ms,omitempty"`
}

// Error makes a Failure usable as an error.
func (f *Failure) Error() string {
	if f.Type != "" {
		return f.Type + ": " + f.Message
	}
	return f.Message
}

// ActivitySchedule is ActivityScheduled's payload.
type ActivitySchedule struct {
	Plugin           string          `json:"plugin"`
	Activity         string          `json:"activity"`
	Input            json.RawMessage `json:"input"`
	Tries            int             `json:"tries"` // 0: unlimited
	TimeoutMS        int64           `json:"timeout_ms,omitempty"`
	HeartbeatTimeout int64           `json:"heartbeat_timeout_ms,omitempty"`
}

// ActivityResult is ActivityCompleted's payload.
type ActivityResult struct {
	Output json.RawMessage `json:"output"`
	// PluginSHA256 is the build of the plugin that served the try (the sha256 of its program
	// or script); empty when unknown, as in histories written before it was recorded.
	PluginSHA256 string `json:"plugin_sha256,omitempty"`
}

// AttemptFailure is the payload of ActivityAttemptFailed / ActivityTimedOut (one try failed)
// and of ActivityFailed (the activity failed for good).
type AttemptFailure struct {
	Failure Failure `json:"failure"`
	// PluginSHA256 is the plugin build the failed try ran on, as in ActivityResult; empty
	// when no process served it (a start failure) and on ActivityFailed.
	PluginSHA256 string `json:"plugin_sha256,omitempty"`
}

// RetrySchedule is ActivityRetryScheduled's payload (field names from the seeds).
type RetrySchedule struct {
	RetryOfTaskID       string    `json:"retry_of_task_id"`
	RetryAfterAttemptID string    `json:"retry_after_attempt_id"`
	RetryAfterAttempt   int       `json:"retry_after_attempt"`
	RetryBackoffSeconds float64   `json:"retry_backoff_seconds"`
	AvailableAt         time.Time `json:"available_at"`
	NextAttempt         int       `json:"next_attempt"`
	// Redelivery marks the next try as a redelivery of an interrupted one (after
	// ActivityAttemptInterrupted): due at once, and not counted against the step's tries.
	Redelivery bool `json:"redelivery,omitempty"`
}

// AttemptInterruption is ActivityAttemptInterrupted's payload.
type AttemptInterruption struct {
	Reason string `json:"reason"`
}

// TimerSchedule is TimerScheduled's payload; TimerFired and TimerCancelled carry the id too.
type TimerSchedule struct {
	TimerID string    `json:"timer_id"`
	FireAt  time.Time `json:"fire_at"`
	Purpose string    `json:"purpose"` // delay, timeout
	// Signal, on a wait_for_signal step's timeout, is the signal waited for
	// (RulesSignalWaitTimes).
	Signal string `json:"signal,omitempty"`
}

// TimerRef names a timer in TimerFired / TimerCancelled.
type TimerRef struct {
	TimerID string `json:"timer_id"`
}

// Signal is SignalReceived's payload; SignalApplied carries Name and ReceivedSeq.
type Signal struct {
	Name        string          `json:"name"`
	Data        json.RawMessage `json:"data,omitempty"`
	SignalID    string          `json:"signal_id,omitempty"` // client's id, for idempotent sends
	ReceivedSeq uint64          `json:"received_seq,omitempty"`
	// WaitedSince, on SignalApplied, is when the step's wait began: the signal arrived
	// before it when the two are equal (RulesSignalWaitTimes).
	WaitedSince time.Time `json:"waited_since,omitzero"`
}

// ChildSchedule is ChildWorkflowScheduled's payload.
type ChildSchedule struct {
	WorkflowID string          `json:"workflow_id"`
	SpecFile   string          `json:"spec_file"` // resolved against the parent's spec file
	Input      json.RawMessage `json:"input"`
	// Shard, on a slice of a sharded for_each, makes the child a shard child: a run of the
	// parent's own spec text (not SpecFile's current content) over the slice (Started.Shard).
	Shard *ShardRef `json:"shard,omitempty"`
}

// WaitSchedule is WorkflowWaitScheduled's payload.
type WaitSchedule struct {
	WorkflowID string `json:"workflow_id"`
}

// Closed is the payload of a run's or child's closing events.
type Closed struct {
	Output  json.RawMessage `json:"output,omitempty"`
	Failure *Failure        `json:"failure,omitempty"`
	RunID   string          `json:"run_id,omitempty"` // child/awaited run, or the next run on continue-as-new
	Input   json.RawMessage `json:"input,omitempty"`  // continue-as-new: the next run's input

	// TimeoutKind is execution_timeout or run_timeout on WorkflowTimedOut.
	TimeoutKind string `json:"timeout_kind,omitempty"`
	// ClosedReason refines the status when the event type alone does not say it
	// (compensation_failed).
	ClosedReason string `json:"closed_reason,omitempty"`
	// Uncompensated lists the steps whose compensation did not complete.
	Uncompensated []string `json:"uncompensated,omitempty"`
}

// Compensation is the payload of CompensationStarted / Completed / Failed.
type Compensation struct {
	Step    string   `json:"step"`              // the compensated step's path
	Reason  string   `json:"reason"`            // cancel or failure
	Unknown bool     `json:"outcome_unknown"`   // the step's activity was in flight at the cancel
	Failure *Failure `json:"failure,omitempty"` // on CompensationFailed
}

// CancelRequest is the payload of CancelRequested, TerminateRequested and
// ChildWorkflowCancelRequested (with the child's id and whether to terminate it).
type CancelRequest struct {
	Reason     string `json:"reason,omitempty"`
	WorkflowID string `json:"workflow_id,omitempty"`
	Terminate  bool   `json:"terminate,omitempty"`
}

// RetryRequest is RetryRequested's payload: the execution whose tries start over.
type RetryRequest struct {
	ActivityExecID string `json:"activity_execution_id"`
	RetryOf        string `json:"retry_of"`
}

// HeartbeatRecord is ActivityHeartbeatRecorded's payload: the try's latest progress.
type HeartbeatRecord struct {
	Progress json.RawMessage `json:"progress,omitempty"`
}

// LimitReached is StructuralLimitReached's payload: which limit, in words for the failure.
type LimitReached struct {
	Message string `json:"message"`
}
