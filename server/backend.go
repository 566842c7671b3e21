package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
)

// Backend is what wend's commands that read or steer runs use. Its methods are Server's: the
// CLI calls them in process when it holds the database, over the control socket of the wend
// process that holds it otherwise, and on another engine (wend-temporal's Temporal cluster)
// through an implementation of this interface. Errors should be *Error, so exit codes and
// messages match whichever engine answers.
type Backend interface {
	// List returns the runs passing q's filters (ListQuery.Match; q's Limit and Cursor are
	// unused), newest first, at most limit of them (0: all); never nil.
	List(q api.ListQuery, limit int) ([]history.Run, error)
	Show(id string) (api.RunDetail, error)
	Events(id string, after uint64) (api.EventPage, error)
	Start(ctx context.Context, req api.StartRequest) (api.Started, error)
	Signal(ctx context.Context, id, name string, data json.RawMessage) (history.Run, error)
	SendSignal(ctx context.Context, id string, req api.SignalRequest) (api.SignalSent, error)
	Cancel(ctx context.Context, id, reason string) (history.Run, error)
	Terminate(ctx context.Context, id, reason string) (history.Run, error)
	Retry(ctx context.Context, id string) (api.Retried, error)
	Repair(ctx context.Context, id string) (api.RepairReport, error)
	Export(id string) (*export.Document, error)
	// Query evaluates a read-only expression over a run (wend query).
	Query(id, expr string) (api.QueryResult, error)
	Wait(ctx context.Context, id string, timeout time.Duration) (api.Outcome, error)
	Check() (api.CheckReport, error)
	Close() error
}

// ScheduleOps is what `wend schedule` does: over a schedule runner (this machine's database,
// or the process holding it), or on a cluster whose Backend also keeps schedules by offering
// a method ScheduleOps() ScheduleOps, and `wend schedule sync` with a method
// Sync([]runner.Entry, bool) (ScheduleSync, error).
type ScheduleOps interface {
	List() ([]runner.View, error)
	Show(id string) (runner.View, error)
	Pause(id, note string) (runner.View, error)
	Resume(id, note string) (runner.View, error)
	Trigger(id string, o schedule.Overlap) (schedule.Fire, error)
	Backfill(id string, from, to time.Time, o schedule.Overlap) (int, error)
	Delete(id string) error
	Close() error
}

// ScheduleSync is what `wend schedule sync` did, by schedule id.
type ScheduleSync struct {
	Created, Updated, Unchanged, Undeclared, Deleted []string
}
