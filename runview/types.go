package runview

import (
	"encoding/json"
	"time"
)

// Workflow is the run itself: identity, spec, status and how it ended.
type Workflow struct {
	WorkflowID   string `json:"workflow_id"`
	RunID        string `json:"run_id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	ClosedReason string `json:"closed_reason,omitempty"`
	SpecFile     string `json:"spec_file"`
	SpecSHA256   string `json:"spec_sha256"`
	ParentRunID  string `json:"parent_run_id,omitempty"`
	ParentStep   string `json:"parent_step,omitempty"`
	// Timeouts are the workflow deadlines the run armed (nil when it has none).
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	// TimeoutKind is execution_timeout or run_timeout when the run timed out.
	TimeoutKind string    `json:"timeout_kind,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	// ExecutionStartedAt is when the workflow id's first run started (continue-as-new keeps it).
	ExecutionStartedAt time.Time       `json:"execution_started_at,omitzero"`
	ClosedAt           time.Time       `json:"closed_at,omitzero"`
	Input              json.RawMessage `json:"input"`
	Output             json.RawMessage `json:"output,omitempty"`
	// Failure is what a failed, cancelled or timed-out run closed with.
	Failure *Failure `json:"failure,omitempty"`
	// CancelReason is the reason given with the first CancelRequested.
	CancelReason string `json:"cancel_reason,omitempty"`
	// Uncompensated lists the steps whose compensation did not complete.
	Uncompensated []string `json:"uncompensated,omitempty"`
	// NextRunID is the run that continued this one (continue-as-new), when recorded.
	NextRunID string `json:"next_run_id,omitempty"`
	// Engine names the engine that ran the run when it was not wend's own (absent then).
	Engine *Engine `json:"engine,omitempty"`
}

// Engine is where a run ran, when not on wend's own engine.
type Engine struct {
	Kind      string `json:"kind"` // "temporal"
	Namespace string `json:"namespace,omitempty"`
	TaskQueue string `json:"task_queue,omitempty"`
}

// Timeouts holds the workflow's deadlines, read from its run_timeout / execution_timeout timers.
type Timeouts struct {
	Run       *Deadline `json:"run,omitempty"`
	Execution *Deadline `json:"execution,omitempty"`
}

// Deadline is one workflow deadline.
type Deadline struct {
	// Seconds is the configured limit: the deadline minus the run's (or execution's) start.
	Seconds  float64   `json:"seconds"`
	Deadline time.Time `json:"deadline"`
	Status   string    `json:"status"` // a timer status: scheduled, fired, cancelled
}

// Activity statuses.
const (
	ActivityScheduled = "scheduled" // a try is owed and has not reported
	ActivityRunning   = "running"   // its current try recorded ActivityStarted
	ActivityRetrying  = "retrying"  // a try failed; the next waits for its backoff
	ActivityCompleted = "completed"
	ActivityFailed    = "failed"
	ActivityCancelled = "cancelled"
)

// Activity is one activity execution (one activity_execution_id) across all its tries.
type Activity struct {
	ActivityExecutionID string          `json:"activity_execution_id"`
	Step                string          `json:"step"`
	Plugin              string          `json:"plugin"`
	Activity            string          `json:"activity"`
	Status              string          `json:"status"`
	Input               json.RawMessage `json:"input"`
	Output              json.RawMessage `json:"output,omitempty"`
	Tries               int             `json:"tries"` // the policy's tries; 0: unlimited
	TimeoutMS           int64           `json:"timeout_ms,omitempty"`
	HeartbeatTimeoutMS  int64           `json:"heartbeat_timeout_ms,omitempty"`
	ScheduledSeq        uint64          `json:"scheduled_seq"`
	ScheduledAt         time.Time       `json:"scheduled_at"`
	ClosedAt            time.Time       `json:"closed_at,omitzero"`
	// NextAttemptAt is when the pending retry becomes due, while the status is retrying.
	NextAttemptAt time.Time `json:"next_attempt_at,omitzero"`
	// NonRetryable is true when the activity failed for good on a non-retryable error.
	NonRetryable bool      `json:"non_retryable"`
	Failure      *Failure  `json:"failure,omitempty"` // the final failure (ActivityFailed)
	Attempts     []Attempt `json:"attempts"`
}

// Attempt outcomes.
const (
	AttemptScheduled = "scheduled" // owed, not reported yet (for a retry: maybe not due yet)
	AttemptRunning   = "running"
	AttemptCompleted = "completed"
	AttemptFailed    = "failed"
	AttemptTimedOut  = "timed_out"
	AttemptCancelled = "cancelled"
	// AttemptInterrupted: the process that handed the try to a plugin stopped before its
	// outcome was recorded; it may have run. The next try redelivers it (Retry.Redelivery).
	AttemptInterrupted = "interrupted"
)

// Attempt is one try of an activity, rebuilt from the events that name its attempt number.
type Attempt struct {
	Attempt           int    `json:"attempt"`
	ActivityAttemptID string `json:"activity_attempt_id"`
	Outcome           string `json:"outcome"`
	// ScheduledAt is when the try became due: the ActivityScheduled time for the first, the
	// retry's available_at for the others. The engine starts it then or as soon as it can.
	ScheduledAt time.Time `json:"scheduled_at"`
	// StartedAt is set only when the history has an ActivityStarted for the try.
	StartedAt       time.Time `json:"started_at,omitzero"`
	EndedAt         time.Time `json:"ended_at,omitzero"`
	EndedSeq        uint64    `json:"ended_seq,omitempty"`
	Heartbeats      int       `json:"heartbeats,omitempty"`
	LastHeartbeatAt time.Time `json:"last_heartbeat_at,omitzero"`
	// LastProgress is the progress the try's last recorded heartbeat reported.
	LastProgress json.RawMessage `json:"last_progress,omitempty"`
	Error        *AttemptError   `json:"error,omitempty"`
	// Interruption is why an interrupted try ended (ActivityAttemptInterrupted's reason).
	Interruption string `json:"interruption,omitempty"`
	// PluginSHA256 is the plugin build that served the try, from its outcome event; empty in
	// histories that do not record it.
	PluginSHA256 string `json:"plugin_sha256,omitempty"`
	// Retry is the ActivityRetryScheduled that followed this try, if one did.
	Retry *Retry `json:"retry,omitempty"`
}

// AttemptError is why a try failed.
type AttemptError struct {
	Type            string `json:"type,omitempty"`
	Message         string `json:"message"`
	NonRetryable    bool   `json:"non_retryable"`
	FailureCategory string `json:"failure_category"`
}

// Retry is an ActivityRetryScheduled payload (field names from the seeds) with its seq.
type Retry struct {
	Seq                 uint64    `json:"seq"`
	RetryOfTaskID       string    `json:"retry_of_task_id"`
	RetryAfterAttemptID string    `json:"retry_after_attempt_id"`
	RetryAfterAttempt   int       `json:"retry_after_attempt"`
	RetryBackoffSeconds float64   `json:"retry_backoff_seconds"`
	AvailableAt         time.Time `json:"available_at"`
	NextAttempt         int       `json:"next_attempt"`
	// Redelivery: the next try redelivers an interrupted one; it does not count against tries.
	Redelivery bool `json:"redelivery,omitempty"`
}

// Timer statuses (also Deadline.Status).
const (
	TimerScheduled = "scheduled"
	TimerFired     = "fired"
	TimerCancelled = "cancelled"
)

// Timer is one durable timer: a delay, a wait's timeout, or a workflow deadline.
type Timer struct {
	TimerID      string    `json:"timer_id"`
	Step         string    `json:"step,omitempty"` // empty for workflow deadlines
	Purpose      string    `json:"purpose"`        // delay, timeout, run_timeout, execution_timeout
	FireAt       time.Time `json:"fire_at"`
	Status       string    `json:"status"`
	ScheduledSeq uint64    `json:"scheduled_seq"`
	ScheduledAt  time.Time `json:"scheduled_at"`
	ClosedSeq    uint64    `json:"closed_seq,omitempty"` // TimerFired or TimerCancelled
	ClosedAt     time.Time `json:"closed_at,omitzero"`
}

// Signal is one received signal and the step it went to, if any yet.
type Signal struct {
	Name        string          `json:"name"`
	SignalID    string          `json:"signal_id,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	ReceivedSeq uint64          `json:"received_seq"`
	ReceivedAt  time.Time       `json:"received_at"`
	// Pending is true while no wait_for_signal step has taken it (it is kept for a later wait).
	Pending       bool      `json:"pending"`
	AppliedSeq    uint64    `json:"applied_seq,omitempty"`
	AppliedAt     time.Time `json:"applied_at,omitzero"`
	AppliedToStep string    `json:"applied_to_step,omitempty"`
}

// Child kinds.
const (
	ChildRun  = "run_workflow"      // a child run the step started
	ChildWait = "wait_for_workflow" // another workflow the step waits on
)

// Child statuses.
const (
	ChildRunning   = "running"
	ChildCompleted = "completed"
	ChildFailed    = "failed"
)

// Child is a child run or an awaited workflow, as the parent's history records it.
type Child struct {
	Kind         string          `json:"kind"`
	WorkflowID   string          `json:"workflow_id"`
	Step         string          `json:"step"`
	SpecFile     string          `json:"spec_file,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Status       string          `json:"status"`
	ScheduledSeq uint64          `json:"scheduled_seq"`
	ScheduledAt  time.Time       `json:"scheduled_at"`
	RunID        string          `json:"run_id,omitempty"` // the run that reported back
	Output       json.RawMessage `json:"output,omitempty"`
	Failure      *Failure        `json:"failure,omitempty"` // as the child reported it
	ClosedSeq    uint64          `json:"closed_seq,omitempty"`
	ClosedAt     time.Time       `json:"closed_at,omitzero"`
}

// Compensation statuses.
const (
	CompensationStarted   = "started"
	CompensationCompleted = "completed"
	CompensationFailed    = "failed"
)

// Compensation is the undoing of one completed step.
type Compensation struct {
	Step           string    `json:"step"`   // the compensated step
	Reason         string    `json:"reason"` // cancel or failure
	OutcomeUnknown bool      `json:"outcome_unknown"`
	Status         string    `json:"status"`
	StartedSeq     uint64    `json:"started_seq"`
	StartedAt      time.Time `json:"started_at"`
	EndedSeq       uint64    `json:"ended_seq,omitempty"`
	EndedAt        time.Time `json:"ended_at,omitzero"`
	Failure        *Failure  `json:"failure,omitempty"`
}

// Unclassified is the failure_category of a failure recorded without one, so it stays
// visible as an unclassified diagnostic instead of being dropped or guessed (the seed).
const Unclassified = "unclassified"

// Failure is a failure as one event recorded it.
type Failure struct {
	Seq                 uint64          `json:"seq"`
	EventType           string          `json:"event_type"`
	Time                time.Time       `json:"time"`
	FailureCategory     string          `json:"failure_category"`
	PropagationKind     string          `json:"propagation_kind"`
	NonRetryable        bool            `json:"non_retryable"`
	Type                string          `json:"type,omitempty"`
	Message             string          `json:"message"`
	Step                string          `json:"step,omitempty"`
	ActivityExecutionID string          `json:"activity_execution_id,omitempty"`
	Attempt             int             `json:"attempt,omitempty"`
	Details             json.RawMessage `json:"details,omitempty"`
	// Caught: the failure ended a step and a catch handled it (that step's or an enclosing
	// step's), so the run went on; absent when it was not caught.
	Caught bool `json:"caught,omitempty"`
}
