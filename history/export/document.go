package export

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/runview"
)

// SchemaName is the value of Document.Schema. A consumer checks it before reading anything
// else; a change that is not purely additive gets a new version.
const SchemaName = "wend.history-export/v1"

// Document is the history export of one run. Every list is present (possibly empty) so a
// consumer never has to tell "none" from "missing".
type Document struct {
	Schema          string         `json:"schema"`
	Workflow        Workflow       `json:"workflow"`
	HistoryEvents   []Event        `json:"history_events"`
	Activities      []Activity     `json:"activities"`
	Timers          []Timer        `json:"timers"`
	Signals         []Signal       `json:"signals"`
	Children        []Child        `json:"children"`
	Compensations   []Compensation `json:"compensations"`
	Failures        []Failure      `json:"failures"`
	OperatorMetrics Metrics        `json:"operator_metrics"`
	// ExportedAt is when the export was made (absent from a Build that no exporter stamped).
	ExportedAt time.Time `json:"exported_at,omitzero"`
	// Integrity, Links and OpenTasks were added to v1 (absent from exports of older wends).
	Integrity *Integrity `json:"integrity,omitempty"`
	Links     *Links     `json:"links,omitempty"`
	// OpenTasks are the tasks the store held for the run when it was exported.
	OpenTasks []OpenTask `json:"open_tasks,omitempty"`
}

// The sections of the document are the run's view (package runview, the one fold of a
// history): the export writes them as they are.
type (
	Workflow     = runview.Workflow
	Engine       = runview.Engine
	Timeouts     = runview.Timeouts
	Deadline     = runview.Deadline
	Activity     = runview.Activity
	Attempt      = runview.Attempt
	AttemptError = runview.AttemptError
	Retry        = runview.Retry
	Timer        = runview.Timer
	Signal       = runview.Signal
	Child        = runview.Child
	Compensation = runview.Compensation
	Failure      = runview.Failure
	Metrics      = runview.Metrics
	Backlog      = runview.Backlog

	ActivityMetrics     = runview.ActivityMetrics
	TimerMetrics        = runview.TimerMetrics
	SignalMetrics       = runview.SignalMetrics
	ChildMetrics        = runview.ChildMetrics
	CompensationMetrics = runview.CompensationMetrics
	FailureMetrics      = runview.FailureMetrics
	HistoryMetrics      = runview.HistoryMetrics
)

// Event is one history event as stored; Data is the typed payload, unchanged.
type Event struct {
	Seq                 uint64          `json:"seq"`
	Type                string          `json:"type"`
	Time                time.Time       `json:"time"`
	Step                string          `json:"step,omitempty"`
	ActivityExecutionID string          `json:"activity_execution_id,omitempty"`
	Attempt             int             `json:"attempt,omitempty"`
	Data                json.RawMessage `json:"data,omitempty"`
}
