package servertest

import (
	"maps"
	"slices"
	"sync"
)

// BatchStore keeps batches in memory, as boltstore does on disk (server.BatchStore).
type BatchStore struct {
	mu      sync.Mutex
	records map[string][]byte
	runs    map[string][]byte
	// Writes counts PutBatchRecord calls.
	Writes int
}

// BatchRecords returns a copy of every record.
func (s *BatchStore) BatchRecords() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.records), nil
}

// BatchRuns returns the run list of batch id, nil when there is none.
func (s *BatchStore) BatchRuns(id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs[id]), nil
}

// CreateBatch stores a record and a run list.
func (s *BatchStore) CreateBatch(id string, record, runs []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records == nil {
		s.records, s.runs = map[string][]byte{}, map[string][]byte{}
	}
	s.records[id], s.runs[id] = slices.Clone(record), slices.Clone(runs)
	return nil
}

// PutBatchRecord rewrites a record.
func (s *BatchStore) PutBatchRecord(id string, record []byte) error {
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
func (s *BatchStore) DeleteBatches(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.records, id)
		delete(s.runs, id)
	}
	return nil
}
