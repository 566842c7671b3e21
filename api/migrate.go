package api

import "github.com/wendflow/wend/history"

// MigrateRequest is the body of POST /v1/runs/{id}/migrate: the workflow text to move the
// open run to (wend migrate).
type MigrateRequest struct {
	File   string `json:"file,omitempty"` // where the text was read: messages, and its run_workflow targets' folder
	Source string `json:"source"`
	DryRun bool   `json:"dry_run,omitempty"` // check only; move nothing
	// By names who asks, recorded in WorkflowMigrated. Only a request over the control socket
	// (the serving user's own) may name one; a request with a token is recorded as the token's.
	By string `json:"by,omitempty"`
}

// MigrateResult is what a migration found for one run.
type MigrateResult struct {
	Run        history.Run `json:"run"` // the run's record after the request
	FromSHA256 string      `json:"from_sha256"`
	ToSHA256   string      `json:"to_sha256"`
	Moved      bool        `json:"moved"`             // WorkflowMigrated is committed
	Already    bool        `json:"already,omitempty"` // the run was on that text already; nothing recorded
	// Divergence, when set, is where the new text decides otherwise than the run's history:
	// the run was left as it was.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence is where a run's history and another workflow text part.
type Divergence struct {
	Seq      uint64 `json:"seq"`                // the event where they part
	Recorded string `json:"recorded,omitempty"` // the history's event type there
	Step     string `json:"step,omitempty"`     // its step path
	Decided  string `json:"decided,omitempty"`  // what the new text decides instead
	At       string `json:"at,omitempty"`       // the step path of that decision
	Reason   string `json:"reason"`
}
