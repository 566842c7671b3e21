package api

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wendflow/wend/history"
)

// RunDetail is one run as `wend show --json` and GET /v1/runs/{id} give it: the record, the
// input and how it ended, its current public state, what it is waiting for now, the signals
// no step has taken, every failure, and the full history.
type RunDetail struct {
	Run     history.Run      `json:"run"`
	Input   json.RawMessage  `json:"input,omitempty"`
	Output  json.RawMessage  `json:"output,omitempty"`  // completed runs
	Failure *history.Failure `json:"failure,omitempty"` // how a failed, cancelled or timed-out run ended
	// State is the run's public state after its last event (Live.State); absent when the
	// history cannot be replayed, and StateError says why.
	State      json.RawMessage `json:"state,omitempty"`
	StateError string          `json:"state_error,omitempty"`
	// Waits are what the open run waits for: activities in flight or backing off, timers,
	// signal waits, children and awaited workflows. Empty once the run has closed.
	Waits []Wait `json:"waits"`
	// Signals are received and not yet taken by a wait_for_signal step (kept for a later
	// wait), with their data.
	Signals  []history.Signal `json:"pending_signals"`
	Failures []FailureAt      `json:"failures"`
	Events   []history.Event  `json:"events"`
	// Queue says what a queued run waits for; absent for any other run.
	Queue *Queue `json:"queue,omitempty"`
}

// FailureAt is a failure recorded in the history, as recorded, with the event that recorded it.
type FailureAt struct {
	Seq     uint64            `json:"seq"`
	Type    history.EventType `json:"type"`
	Time    time.Time         `json:"time"`
	Failure history.Failure   `json:"failure"`
	// Caught: a catch handled the failure and the run went on (Failure.Caught).
	Caught bool `json:"caught,omitempty"`
}

// Wait is one thing an open run waits for.
type Wait struct {
	Kind  string    `json:"kind"`
	Step  string    `json:"step,omitempty"`
	Since time.Time `json:"since,omitzero"` // when the wait began, when the history says
	// activity
	Activity            string `json:"activity,omitempty"` // plugin.activity
	ActivityExecutionID string `json:"activity_execution_id,omitempty"`
	Attempt             int    `json:"attempt,omitempty"`
	// Until is when a timer fires or a retry becomes due.
	Until   time.Time `json:"until,omitzero"`
	Purpose string    `json:"purpose,omitempty"` // timer: delay or timeout
	Signal  string    `json:"signal,omitempty"`
	// WorkflowID is the child's or the awaited workflow's id.
	WorkflowID string `json:"workflow_id,omitempty"`
}

// Queue is what a queued run waits for: a place under its workflow's concurrency key
// (docs/language.md, Concurrency). A queued run has no history yet.
type Queue struct {
	Key      string `json:"key"`
	Limit    int    `json:"limit"`
	Running  int    `json:"running"`  // runs of the key holding a place now
	Position int    `json:"position"` // 1 for the run that starts next
}

func (q Queue) String() string {
	return fmt.Sprintf("queued: %d of %d running for key %s (position %d)", q.Running, q.Limit, q.Key, q.Position)
}
