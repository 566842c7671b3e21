package api

import "github.com/wendflow/wend/history"

// Workflow is a registered workflow: POST /v1/runs may start it by Name; File (absolute) is
// read again at each start, so a run records the exact text it started with.
type Workflow struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// WorkflowList is the body of GET /v1/workflows, sorted by name.
type WorkflowList struct {
	Workflows []Workflow `json:"workflows"`
}

// RollRequest names the plugin to roll; empty: every plugin.
type RollRequest struct {
	Plugin string `json:"plugin,omitempty"`
}

// Rolled is RollPlugins' answer: one entry per running plugin process it replaced (none when
// no process of the plugin runs: its next try starts the program as it is then).
type Rolled struct {
	Rolled []PluginRoll `json:"rolled"`
}

// PurgeRequest is the body of POST /v1/purge.
type PurgeRequest struct {
	RunIDs []string `json:"run_ids"`
}

// Purged is the answer of POST /v1/purge/select (the runs a purge would delete) and of
// POST /v1/purge (the runs it deleted).
type Purged struct {
	Runs []history.Run `json:"runs"`
}

// PluginRoll is what rolling one running plugin did: POST /v1/plugins/roll.
type PluginRoll struct {
	Plugin    string `json:"plugin"`
	OldPID    int    `json:"old_pid"`
	OldSHA256 string `json:"old_sha256,omitempty"`
	NewPID    int    `json:"new_pid,omitempty"`    // absent when the new build did not start
	NewSHA256 string `json:"new_sha256,omitempty"` // the build the plugin's next tries run
	// Error says why the new build did not start; the old process goes on serving.
	Error string `json:"error,omitempty"`
}

// MaxPurgeIDs caps the run ids of one POST /v1/purge: a client purges many runs in requests of
// this many, so each answers within a few seconds and the client can report progress.
const MaxPurgeIDs = 1000
