package boltstore

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketSchedules holds the durable state of schedules (schedule/runner): schedule id ->
// framed record body, opaque to the store. It is made on first use, so databases without
// schedules keep their layout unchanged, and it is written by checkpoints
// of their own (PutScheduleStates), not through the log: a fire is recorded here before the run it starts is committed.
var bucketSchedules = []byte("schedules")

// ScheduleStates returns every stored schedule record, by schedule id.
func (s *Store) ScheduleStates() (map[string][]byte, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err := guard(func() error {
		return s.readTx(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketSchedules)
			if b == nil {
				return nil
			}
			return forEach(b, func(k, v []byte) error {
				body, err := unframe(k, v)
				if err != nil {
					return fmt.Errorf("schedule %q: %w", k, err)
				}
				out[string(k)] = append([]byte(nil), body...)
				return nil
			})
		})
	})
	return out, err
}

// PutScheduleStates writes the records in put and deletes the ids in del, all or nothing,
// durable when it returns. A failed transaction is fatal, as a failed history commit is.
func (s *Store) PutScheduleStates(put map[string][]byte, del []string) error {
	if err := s.usable(); err != nil {
		return err
	}
	if _, ok := put[""]; ok {
		return errors.New("put schedule state: empty schedule id")
	}
	return s.updateOutsideLog(func(tx *bolt.Tx) error { return putSchedules(tx, put, del) })
}

func putSchedules(tx *bolt.Tx, put map[string][]byte, del []string) error {
	b, err := tx.CreateBucketIfNotExists(bucketSchedules)
	if err != nil {
		return err
	}
	for id, body := range put {
		if err := b.Put([]byte(id), frame([]byte(id), body)); err != nil {
			return err
		}
	}
	for _, id := range del {
		if err := b.Delete([]byte(id)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) usable() error {
	if s.closed.Load() {
		return errors.New("database is closed")
	}
	if s.readOnly {
		return ErrReadOnly
	}
	return s.Err()
}
