package api

import (
	"encoding/json"

	"github.com/wendflow/wend/history"
)

// StartRequest describes a new run. It is also the body of the control API's POST /v1/runs
// (docs/api.md), so its JSON names are a contract.
type StartRequest struct {
	WorkflowID string `json:"id,omitempty"` // "" picks NAME-<random>
	// Workflow names a workflow registered with the control API instead of SpecFile and
	// Source; the API reads its file into those before the engine sees the request, and the
	// engine refuses a request that still names one.
	Workflow string          `json:"workflow,omitempty"`
	SpecFile string          `json:"spec_file,omitempty"` // path, for messages and run_workflow paths
	Source   string          `json:"source,omitempty"`    // exact spec text
	Input    json.RawMessage `json:"input,omitempty"`     // JSON; empty means null
	// TraceParent is a W3C trace context to run under: the run's spans and its plugin calls
	// join that trace. Recorded in WorkflowStarted, so it survives restarts; "" for none.
	TraceParent string `json:"traceparent,omitempty"`
}

// Started is Start's answer; Started is false when the id named an existing run
// (docs/reliability.md G8).
type Started struct {
	Run     history.Run `json:"run"`
	Started bool        `json:"started"`
}

// EventPage is a run's record and its events after a seq.
type EventPage struct {
	Run    history.Run     `json:"run"`
	Events []history.Event `json:"events"`
}

// Outcome is how a workflow ended; Closed is false when Wait's timeout came first.
type Outcome struct {
	Run     history.Run      `json:"run"`
	Closed  bool             `json:"closed"`
	Output  json.RawMessage  `json:"output,omitempty"`
	Failure *history.Failure `json:"failure,omitempty"`
}

// SignalRequest is the body of POST /v1/runs/{id}/signals.
type SignalRequest struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data,omitempty"`
	// ID makes the send idempotent: a client that lost the answer sends again with the same
	// ID, and the run gets the signal once.
	ID string `json:"id,omitempty"`
}

// SignalSent is the answer to POST /v1/runs/{id}/signals: the run's record after the send,
// and whether the send was a resend of a signal id the workflow had already recorded (then
// nothing was recorded now; the answer is still a success, so a client that lost the first
// answer can simply send again).
type SignalSent struct {
	Run       history.Run `json:"run"`
	Duplicate bool        `json:"duplicate"`
}

// QueryResult is the answer of GET /v1/runs/{id}/query: the run asked and the expression's
// value as JSON.
type QueryResult struct {
	Run   history.Run     `json:"run"`
	Value json.RawMessage `json:"value"`
}

// Retried is Retry's answer: the new run, and the failed run it resumes.
type Retried struct {
	Run     history.Run `json:"run"`
	RetryOf string      `json:"retry_of"`
}

// RepairReport says what Repair rebuilt.
type RepairReport struct {
	// Runs is how many open runs were examined.
	Runs int `json:"runs"`
	// Rebuilt lists every task recreated, as "run-id: task-id"; empty for healthy runs.
	Rebuilt []string `json:"rebuilt"`
	// Indexes lists what a repair of every run changed in the store's indexes, a line per
	// entry put, deleted or recounted; none when they matched the run records.
	Indexes []string `json:"indexes,omitempty"`
}

// CheckReport is the result of an integrity check of the whole store.
type CheckReport struct {
	Runs     int      `json:"runs"`
	Events   uint64   `json:"events"`
	Problems []string `json:"problems"`
	// Notes are what the operator should know and is no problem (an acknowledged log loss).
	Notes []string `json:"notes,omitempty"`
}
