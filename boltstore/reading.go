package boltstore

import (
	"errors"
	"fmt"

	berrors "go.etcd.io/bbolt/errors"
)

// Opening for reading (Options.ReadOnly): what `wend list`, `show`, `history` and `check` need,
// and all they may do on a full disk. Nothing is written: not the file, not its log, not the
// folder (no pid file, no spare segment removed, no checkpoint). The log past the last
// checkpoint is applied, as at any Open, into a bbolt write transaction, which is kept open
// for the store's life as the writer keeps its own between checkpoints (opentx.go), so reads
// see every acknowledged commit; it is rolled back at Close. bbolt writes nothing before a
// commit: its dirty pages stay in memory, and the file grows only when a transaction commits.
// The store takes bbolt's lock as a writer does, so no writer runs meanwhile.

// ErrReadOnly is returned by the writes of a store opened with Options.ReadOnly.
var ErrReadOnly = errors.New("database opened for reading only")

// errLogLossToRecord is openReading's error for a database whose log is missing when the loss
// is accepted: recording it is a write, so Open opens the store for writing instead.
var errLogLossToRecord = errors.New("the accepted log loss must be recorded")

// openReading opens the existing database at path for reading only.
func openReading(path string, opts Options) (*Store, error) {
	if err := refuseEmpty(path); err != nil {
		return nil, err
	}
	db, err := openChecked(path, opts)
	for i := 0; errors.Is(err, errReplaced) && i < 3; i++ {
		db, err = openChecked(path, opts)
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open database: %w", inUse(path))
	}
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db, path: path, pidPath: path + ".pid", openMax: openBatchesMax, readOnly: true}
	if err := guard(func() error { return s.db.View(checkSchema) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if _, err := s.checkLogPresent(opts.AcceptLogLoss); err != nil {
		db.Close()
		if errors.Is(err, errLogLossToRecord) {
			return nil, err
		}
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if _, err := s.replayLog(opts.AcceptLogLoss); err != nil {
		s.dropOpen()
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return s, nil
}

// closeReading rolls back the transaction holding the log's records and closes the file.
func (s *Store) closeReading() error {
	s.closed.Store(true)
	s.writeMu.Lock()
	s.dropOpen()
	s.writeMu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}
