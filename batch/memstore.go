package batch

import (
	"maps"
	"slices"
	"sync"
)

// MemStore keeps batches in memory, as boltstore does on disk: the Store of tests and of a
// runner whose batches need not outlive the process.
type MemStore struct {
	mu      sync.Mutex
	records map[string][]byte
	runs    map[string][]byte
	// Writes counts PutBatchRecord calls.
	Writes int
}

// BatchRecords returns a copy of every record.
func (s *MemStore) BatchRecords() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.records), nil
}

// BatchRuns returns the run list of batch id, nil when there is none.
func (s *MemStore) BatchRuns(id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs[id]), nil
}

// CreateBatch stores a record and a run list.
func (s *MemStore) CreateBatch(id string, record, runs []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records == nil {
		s.records, s.runs = map[string][]byte{}, map[string][]byte{}
	}
	s.records[id], s.runs[id] = slices.Clone(record), slices.Clone(runs)
	return nil
}

// PutBatchRecord rewrites a record.
func (s *MemStore) PutBatchRecord(id string, record []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records == nil {
		s.records, s.runs = map[string][]byte{}, map[string][]byte{}
	}
	s.records[id] = slices.Clone(record)
	s.Writes++
	return nil
}

// DeleteBatches deletes batches.
func (s *MemStore) DeleteBatches(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.records, id)
		delete(s.runs, id)
	}
	return nil
}
