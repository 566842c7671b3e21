package history

import "time"

// Run statuses.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	StatusContinued = "continued"
	// StatusQueued is a run over its workflow's concurrency limit for its key: its start is
	// recorded (the record and a queued task) but it has no events until it starts.
	StatusQueued = "queued"
)

// Closed reasons, finer than the status (a timed-out run has status failed).
const (
	ClosedCompleted          = "completed"
	ClosedFailed             = "failed"
	ClosedTimedOut           = "timed_out"
	ClosedCancelled          = "cancelled"
	ClosedTerminated         = "terminated"
	ClosedContinued          = "continued"
	ClosedCompensationFailed = "compensation_failed"
)

// Run is the summary record of one run; its history is its events.
type Run struct {
	WorkflowID   string    `json:"workflow_id"`
	RunID        string    `json:"run_id"`
	Name         string    `json:"name"` // the workflow's name
	Status       string    `json:"status"`
	ClosedReason string    `json:"closed_reason,omitempty"`
	SpecFile     string    `json:"spec_file"`
	SpecSHA256   string    `json:"spec_sha256"`
	ParentRunID  string    `json:"parent_run_id,omitempty"`
	ParentStep   string    `json:"parent_step,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	ClosedAt     time.Time `json:"closed_at,omitzero"`
	LastSeq      uint64    `json:"last_seq"`
	// Search holds the run's search field values (the workflow's `search:`) by name: a
	// string, a float64, a bool, or a time as RFC 3339 text in UTC. A field without a value
	// (nil, or of the wrong type) is absent.
	Search map[string]any `json:"search,omitempty"`
	// SearchProblems says, by field, why a search field has no value (its expression failed
	// or gave a value of the wrong type): a note for the operator, not a failure of the run.
	SearchProblems map[string]string `json:"search_problems,omitempty"`
}

// Open reports whether the run has not closed yet: it runs, or waits queued to start.
func (r Run) Open() bool { return r.Status == StatusRunning || r.Status == StatusQueued }

// NeverStarted reports whether the run has no history because it never left the queue: it
// is queued, or was cancelled or terminated while queued.
func (r Run) NeverStarted() bool {
	return r.LastSeq == 0 && (r.Status == StatusQueued || r.Status == StatusCancelled)
}

// ClosedBy maps a terminal event to the status and closed reason of the run it closes. The
// event's payload can refine the reason (compensation_failed), which its type alone cannot say.
func ClosedBy(ev Event) (status, reason string) {
	switch ev.Type {
	case WorkflowCompleted:
		status, reason = StatusCompleted, ClosedCompleted
	case WorkflowContinuedAsNew:
		status, reason = StatusContinued, ClosedContinued
	case WorkflowCancelled:
		status, reason = StatusCancelled, ClosedCancelled
	case WorkflowTimedOut:
		status, reason = StatusFailed, ClosedTimedOut
	case WorkflowTerminated:
		status, reason = StatusCancelled, ClosedTerminated
	default:
		status, reason = StatusFailed, ClosedFailed
	}
	if c, err := DataOf[Closed](ev); err == nil && c.ClosedReason != "" {
		reason = c.ClosedReason
	}
	return status, reason
}
