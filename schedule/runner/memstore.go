package runner

import (
	"maps"
	"sync"
)

// MemStore is a Store in memory, for tests and for callers that keep schedule state nowhere
// (boltstore.Store is the durable one).
type MemStore struct {
	mu   sync.Mutex
	recs map[string][]byte
}

// ScheduleStates returns a copy of every stored record by schedule id.
func (m *MemStore) ScheduleStates() (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.recs), nil
}

// PutScheduleStates stores put and deletes del.
func (m *MemStore) PutScheduleStates(put map[string][]byte, del []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs == nil {
		m.recs = map[string][]byte{}
	}
	maps.Copy(m.recs, put)
	for _, id := range del {
		delete(m.recs, id)
	}
	return nil
}
