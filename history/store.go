package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Store errors.
var (
	// ErrNotFound is returned when a run does not exist.
	ErrNotFound = errors.New("not found")
	// ErrSeqConflict is returned by Commit when appended events do not continue the run's
	// history (a second writer, or an engine bug); nothing of the commit is written.
	ErrSeqConflict = errors.New("history sequence conflict")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("store closed")
	// ErrRefused is returned by Commit for content the store cannot hold (an id too long to
	// be a key): nothing of the commit is written and the store goes on, so a caller fails
	// the one request the content came from, never the whole engine.
	ErrRefused = errors.New("the store refuses this content")
)

// Commit is one atomic, durable change: events appended to runs, run records updated, tasks
// created and deleted. Either all of it is stored or none of it.
type Commit struct {
	Runs        []RunUpdate
	PutTasks    []Task
	DeleteTasks []string // task ids
}

// RunUpdate appends Events (Seq continuing Run.LastSeq - len(Events)) and stores Run.
type RunUpdate struct {
	Run    Run
	Events []Event
}

// RunFilter selects runs for Runs; zero fields match everything.
type RunFilter struct {
	WorkflowID string
	Status     string
	Search     []SearchCond // clauses on search fields, all of which a run passes
}

// Store keeps runs, their histories and their tasks. Implementations: MemStore here (tests),
// boltstore (durable). Commit must be durable when it returns nil.
type Store interface {
	Commit(ctx context.Context, c Commit) error
	Run(runID string) (Run, error)
	Events(runID string, afterSeq uint64) ([]Event, error)
	Runs(f RunFilter) ([]Run, error) // newest first
	// Tasks returns every open task. A store that finds task records damaged may return the
	// sound ones with a *DamagedTasksError naming the others: tasks are derived from history,
	// so a caller that can rebuild them (the engine's repair) goes on without them.
	Tasks() ([]Task, error)
	Close() error
}

// IndexRepairer is a store that keeps indexes derived from its run records (boltstore's
// workflow and search indexes) and rebuilds them on demand: RepairIndexes makes every index
// match the records and returns a line per entry it changed, none when they matched.
type IndexRepairer interface {
	RepairIndexes() ([]string, error)
}

// DamagedTasksError is Tasks' error when it set damaged task records aside; the tasks it
// returns with it are the sound ones.
type DamagedTasksError struct {
	Damaged []DamagedTask
}

// DamagedTask is a task record that could not be read.
type DamagedTask struct {
	Key     string // the key it is stored under, which may itself be damaged
	Problem string // what is wrong, naming the task
}

func (e *DamagedTasksError) Error() string {
	ps := make([]string, len(e.Damaged))
	for i, d := range e.Damaged {
		ps[i] = d.Problem
	}
	return fmt.Sprintf("%d damaged task record(s) set aside: %s", len(e.Damaged), strings.Join(ps, "; "))
}

// Match reports whether r passes the filter.
func (f RunFilter) Match(r Run) bool {
	if (f.WorkflowID != "" && r.WorkflowID != f.WorkflowID) || (f.Status != "" && r.Status != f.Status) {
		return false
	}
	for _, c := range f.Search {
		if !c.Match(r) {
			return false
		}
	}
	return true
}

// SortRuns orders runs newest first (by start time, then run id for a stable order).
func SortRuns(runs []Run) {
	slices.SortFunc(runs, func(a, b Run) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.RunID, a.RunID)
	})
}

// CheckAppend verifies that u continues a history whose last event is prevSeq.
func CheckAppend(prevSeq uint64, u RunUpdate) error {
	want := prevSeq
	for _, e := range u.Events {
		want++
		if e.Seq != want {
			return fmt.Errorf("run %s: event %s has seq %d, want %d: %w", u.Run.RunID, e.Type, e.Seq, want, ErrSeqConflict)
		}
	}
	if u.Run.LastSeq != want {
		return fmt.Errorf("run %s: record says last seq %d, events end at %d: %w", u.Run.RunID, u.Run.LastSeq, want, ErrSeqConflict)
	}
	return nil
}
