package history

import (
	"context"
	"slices"
	"sync"
)

// MemStore is an in-memory Store for tests: the same contract as a durable store, no disk.
type MemStore struct {
	mu     sync.Mutex
	runs   map[string]Run
	events map[string][]Event
	tasks  map[string]Task
	closed bool
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{runs: map[string]Run{}, events: map[string][]Event{}, tasks: map[string]Task{}}
}

// Commit applies c atomically.
func (m *MemStore) Commit(_ context.Context, c Commit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	last := map[string]uint64{}
	for _, u := range c.Runs {
		prev, ok := last[u.Run.RunID]
		if !ok {
			prev = m.runs[u.Run.RunID].LastSeq
		}
		if err := CheckAppend(prev, u); err != nil {
			return err
		}
		last[u.Run.RunID] = u.Run.LastSeq
	}
	for _, u := range c.Runs {
		m.runs[u.Run.RunID] = u.Run
		m.events[u.Run.RunID] = append(m.events[u.Run.RunID], u.Events...)
	}
	for _, id := range c.DeleteTasks {
		delete(m.tasks, id)
	}
	for _, t := range c.PutTasks {
		m.tasks[t.ID] = t
	}
	return nil
}

// Run returns a run's record.
func (m *MemStore) Run(runID string) (Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[runID]
	if !ok {
		return Run{}, ErrNotFound
	}
	return r, nil
}

// Events returns a run's events with Seq > afterSeq.
func (m *MemStore) Events(runID string, afterSeq uint64) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	evs, ok := m.events[runID]
	if !ok {
		if _, ok := m.runs[runID]; !ok {
			return nil, ErrNotFound
		}
	}
	if afterSeq >= uint64(len(evs)) {
		return nil, nil
	}
	return slices.Clone(evs[afterSeq:]), nil
}

// Runs returns the runs matching f, newest first.
func (m *MemStore) Runs(f RunFilter) ([]Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Run
	for _, r := range m.runs {
		if f.Match(r) {
			out = append(out, r)
		}
	}
	SortRuns(out)
	return out, nil
}

// Tasks returns every open task.
func (m *MemStore) Tasks() ([]Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Task) int { return a.AvailableAt.Compare(b.AvailableAt) })
	return out, nil
}

// Close makes further commits fail.
func (m *MemStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
