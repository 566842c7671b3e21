// Package wire is the contract between wend's Temporal parts: the names the workflow, its
// activities, signals and queries are registered under, and the shapes that cross the
// Temporal client. The driver, the worker and the CLI backend all take them from here, so a
// rename cannot split them. It imports the history package and the standard library only.
package wire

import (
	"encoding/json"

	"github.com/wendflow/wend/history"
)

// Names registered on a worker. The workflow type carries a version: an interpreter change
// that decides differently for an existing history needs a new type (or a patch), never a
// silent change under open runs.
const (
	WorkflowType = "wend.v1"
	ActivityCall = "wend.activity" // one try of one plugin activity; returns its output
	// ActivityCallBuild is ActivityCall returning Result: the output and the plugin build that
	// served it. Runs started since (the driver's PluginBuildVersion) call it; runs started
	// before keep ActivityCall, so their histories replay unchanged.
	ActivityCallBuild = "wend.activity.build"
	ActivityAwait     = "wend.awaitWorkflow" // wait_for_workflow: block until another run closes
	SignalName        = "wend.signal"        // every wend signal, one channel, arrival order kept
	CancelSignalName  = "wend.cancel"        // a cancel with its reason, sent before Temporal's cancel
	QueryEvents       = "wend.events"        // a page of the run's wend history
	DefaultTaskQueue  = "wend"
	DefaultNamespace  = "default"
)

// StartInput is the workflow's input. Started is the WorkflowStarted payload (spec text
// included); Specs holds the text of every run_workflow file the spec reaches, keyed by the
// path the interpreter names it by, so a child runs the text its parent started with and
// editing files never changes an open run.
//
// A retry (wend retry) also carries Prefix, the failed run's history up to its failed
// activity's last try as the local retry keeps it (interpreter.PlanRetry), and RetryActivity,
// that activity's activity_execution_id. The driver replays the prefix without acting on it,
// records RetryRequested and starts what is still pending.
//
// SearchAttributes are the wend custom search attributes (spec.TemporalSearchAttribute)
// registered on the namespace when the run was started, name to type as
// spec.TemporalSearchType names it: the driver sets only these, because an upsert of an
// attribute the namespace lacks fails every workflow task and stalls the run. Children and
// continue-as-new carry it on.
type StartInput struct {
	Started          history.Started   `json:"started"`
	Specs            map[string]string `json:"specs,omitempty"`
	Prefix           []history.Event   `json:"prefix,omitempty"`
	RetryActivity    string            `json:"retry_activity,omitempty"`
	SearchAttributes map[string]string `json:"search_attributes,omitempty"`
}

// MaxPayloadBytes is the most the driver hands Temporal as one payload, and the most a start
// input may be: Temporal's 2 MiB blob limit, less room for the payload's metadata.
const MaxPayloadBytes = 2<<20 - 16<<10

// Signal is the payload of SignalName: one wend signal.
type Signal struct {
	Name     string          `json:"name"`
	Data     json.RawMessage `json:"data,omitempty"`
	SignalID string          `json:"signal_id,omitempty"`
}

// Cancel is the payload of CancelSignalName.
type Cancel struct {
	Reason string `json:"reason"`
}

// EventsQuery asks for the events after seq After, at most MaxBytes of them (at least one).
type EventsQuery struct {
	After    uint64 `json:"after"`
	MaxBytes int    `json:"max_bytes"`
}

// EventsPage answers an EventsQuery. More says more events follow; Total is the run's count.
type EventsPage struct {
	Events []history.Event `json:"events"`
	More   bool            `json:"more"`
	Total  uint64          `json:"total"`
}

// AwaitInput is wend.awaitWorkflow's input: the workflow id to wait for.
type AwaitInput struct {
	WorkflowID string `json:"workflow_id"`
}

// MigrateSignalName carries Migrate: move the open run to another text of its workflow. The
// workflow applies it only when the run's history replays on the text (the check of wend
// validate --against), at the point of its history the signal arrives, so a replay of the
// execution takes the same verdict; QueryMigration tells the verdict.
const (
	MigrateSignalName = "wend.migrate"
	QueryMigration    = "wend.migration" // the verdict of one Migrate, by its ID
)

// Migrate is the payload of MigrateSignalName. Specs holds the text of every run_workflow
// file the new text reaches that the run's StartInput.Specs lacks or that changed with it.
type Migrate struct {
	ID     string            `json:"id"` // the caller's, to ask QueryMigration for the verdict
	Source string            `json:"source"`
	File   string            `json:"file,omitempty"` // where the text was read, for people
	By     string            `json:"by,omitempty"`
	Specs  map[string]string `json:"specs,omitempty"`
}

// MigrateVerdict answers QueryMigration: Seen is false while the signal has not been applied
// (or its ID is unknown). Moved: WorkflowMigrated is in the run's history; Already: the run
// was on that text; Divergence: where the text parts from the history (the run stays);
// Error: the text was refused before the check (invalid, another workflow).
type MigrateVerdict struct {
	Seen       bool        `json:"seen"`
	FromSHA256 string      `json:"from_sha256,omitempty"`
	ToSHA256   string      `json:"to_sha256,omitempty"`
	Moved      bool        `json:"moved,omitempty"`
	Already    bool        `json:"already,omitempty"`
	Divergence *Divergence `json:"divergence,omitempty"`
	Error      string      `json:"error,omitempty"`
}

// Divergence is where a run's history and another text part (interpreter.Divergence).
type Divergence struct {
	Seq      uint64 `json:"seq"`
	Recorded string `json:"recorded,omitempty"`
	Step     string `json:"step,omitempty"`
	Decided  string `json:"decided,omitempty"`
	At       string `json:"at,omitempty"`
	Reason   string `json:"reason"`
}
