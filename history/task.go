package history

import (
	"encoding/json"
	"time"
)

// TaskKind says which part of the engine a task is for.
type TaskKind string

// Task kinds.
const (
	TaskActivity TaskKind = "activity" // call a plugin (one try)
	TaskTimer    TaskKind = "timer"    // fire a timer of a run
	TaskChild    TaskKind = "child"    // start a child run
	TaskWait     TaskKind = "wait"     // wait for another workflow to close
	TaskQueued   TaskKind = "queued"   // start a run queued by its concurrency key
)

// Task is durable work the engine owes a run, written in the same transaction as the event
// that created it, so a crash never loses it. AvailableAt delays it (timers, retry backoff).
type Task struct {
	ID          string          `json:"id"`
	RunID       string          `json:"run_id"`
	Kind        TaskKind        `json:"kind"`
	AvailableAt time.Time       `json:"available_at"`
	Data        json.RawMessage `json:"data,omitempty"`
	// Dispatched marks an activity task a driving engine is handing to a plugin, written
	// before the call is made: a task found with it after a restart was (possibly) delivered
	// by a process that stopped, and is redelivered as a new attempt (docs/reliability.md).
	Dispatched bool `json:"dispatched,omitempty"`
}
