package api

import (
	"encoding/json"
	"time"
)

// A batch is one operation (cancel, terminate, signal, retry, purge or migrate) over a set of runs
// fixed when it is accepted (a --where filter's matches, or ids given), acted on one run at a
// time at a paced rate, its progress kept in the store so a restarted serve resumes it
// (package batch runs them; docs/api.md, Batches). These are its wire types.

// Batch operations.
const (
	BatchOpCancel    = "cancel"
	BatchOpTerminate = "terminate"
	BatchOpSignal    = "signal"
	BatchOpRetry     = "retry"
	BatchOpPurge     = "purge"
	BatchOpMigrate   = "migrate" // each open run to a new text of its workflow file (wend migrate)
)

// Batch statuses.
const (
	BatchRunning   = "running"
	BatchCompleted = "completed"
	BatchFailed    = "failed"    // the batch could not go on (its store failed); Error says why
	BatchCancelled = "cancelled" // stopped by POST /v1/batches/{id}/cancel; the rest was not acted on
)

// Limits where a batch's input enters.
const (
	// MaxBatchRuns caps the runs one batch acts on: a filter matching more is refused, so a
	// typo does not queue hours of work; narrow it, or split it by time.
	MaxBatchRuns = 100_000
	// MaxBatchIDs caps the run ids a request names explicitly.
	MaxBatchIDs = 10_000
	// DefaultBatchRPS is the pace of a batch whose request gives no rps, in runs a second.
	DefaultBatchRPS = 50
	// MaxBatchRPS caps a request's rps: each act is a commit, and serve must keep answering.
	MaxBatchRPS = 1000
)

// BatchRequest is the body of POST /v1/batches.
type BatchRequest struct {
	// ID, when given, makes the request idempotent: a resend with the same id and request
	// answers the batch accepted first. Else the server makes one.
	ID        string `json:"id,omitempty"`
	Operation string `json:"operation"`
	// Where is a filter as wend list --where takes it (ParseWhere); RunIDs names runs (or
	// workflow ids, acting on their newest run) instead. One of the two.
	Where  string       `json:"where,omitempty"`
	RunIDs []string     `json:"run_ids,omitempty"`
	Reason string       `json:"reason,omitempty"` // cancel and terminate: recorded in each run
	Signal *BatchSignal `json:"signal,omitempty"` // signal: what to send
	// Migrate is what a migrate batch moves each run to; its By is set by the server.
	Migrate *BatchMigrate `json:"migrate,omitempty"`
	// RPS is the pace, in runs a second (DefaultBatchRPS when 0, at most MaxBatchRPS).
	RPS float64 `json:"rps,omitempty"`
	// RunsDigest is kept in place of RunIDs in a stored batch: the SHA-256 of the ids given,
	// each followed by a newline, so a resend naming other runs is told apart. Set by the
	// server; a request's is ignored.
	RunsDigest string `json:"runs_digest,omitempty"`
}

// BatchSignal is what a signal batch sends to each run.
type BatchSignal struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data,omitempty"`
	// ID is the signals' idempotency id (SignalRequest.ID); the batch's own when "".
	ID string `json:"id,omitempty"`
}

// BatchMigrate is the workflow text a migrate batch moves each run to (api.MigrateRequest).
type BatchMigrate struct {
	File   string `json:"file,omitempty"`
	Source string `json:"source"`
	By     string `json:"by,omitempty"` // who asked, recorded in each run moved (Requester)
}

// Batch is a batch's state: its request (without the run ids, kept apart), where it is, and
// its counts. Done + Failed + Skipped runs have been acted on; Next is the index of the first
// run of the set not yet acted on.
type Batch struct {
	ID        string         `json:"id"`
	Request   BatchRequest   `json:"request"`
	Status    string         `json:"status"`
	Error     string         `json:"error,omitempty"`
	Matched   int            `json:"matched"` // runs the filter matched when accepted
	Total     int            `json:"total"`   // runs in the set: those of Matched it can act on
	Next      int            `json:"next"`
	Done      int            `json:"done"`
	Failed    int            `json:"failed"`
	Skipped   int            `json:"skipped"`              // finished (or gone) before the batch came to them
	SkippedBy map[string]int `json:"skipped_by,omitempty"` // why, counted
	Failures  []BatchFailure `json:"failures,omitempty"`   // the first 100 (package batch)
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	ClosedAt  time.Time      `json:"closed_at,omitzero"`
	// Claimed is the end of the runs being acted on when the record was written: after a
	// crash, the runs in [Next, Claimed) may have been acted on, and are checked first.
	Claimed int `json:"claimed,omitempty"`
}

// BatchFailure is a run a batch failed to act on, and why.
type BatchFailure struct {
	RunID string `json:"run_id"`
	Error string `json:"error"`
}

// Open reports whether the batch still acts.
func (b Batch) Open() bool { return b.Status == BatchRunning }
