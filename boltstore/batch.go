package boltstore

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Batches (server's bulk operations over runs) keep two buckets, made on first use so
// databases without batches keep their layout, and written by transactions of their own, not
// through the log, as schedules are:
//   - bucketBatches: batch id -> framed record body (its request, status, counts and the
//     index of the first run not yet acted on), rewritten as the batch goes;
//   - bucketBatchRuns: batch id -> framed list of the run ids it acts on, written once when
//     the batch is accepted.
//
// Both bodies are opaque to the store.
var (
	bucketBatches   = []byte("batches")
	bucketBatchRuns = []byte("batch_runs")
)

// BatchRecords returns every stored batch record, by batch id.
func (s *Store) BatchRecords() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := guard(func() error {
		return s.readTx(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketBatches)
			if b == nil {
				return nil
			}
			return forEach(b, func(k, v []byte) error {
				body, err := unframe(k, v)
				if err != nil {
					return fmt.Errorf("batch %q: %w", k, err)
				}
				out[string(k)] = append([]byte(nil), body...)
				return nil
			})
		})
	})
	return out, err
}

// BatchRuns returns the run list stored with batch id, or nil when there is none.
func (s *Store) BatchRuns(id string) ([]byte, error) {
	var out []byte
	err := guard(func() error {
		return s.readTx(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketBatchRuns)
			if b == nil {
				return nil
			}
			v := b.Get([]byte(id))
			if v == nil {
				return nil
			}
			body, err := unframe([]byte(id), v)
			if err != nil {
				return fmt.Errorf("runs of batch %q: %w", id, err)
			}
			out = append([]byte(nil), body...)
			return nil
		})
	})
	return out, err
}

// CreateBatch stores a new batch's record and run list in one transaction, durable when it
// returns.
func (s *Store) CreateBatch(id string, record, runs []byte) error {
	if err := s.usable(); err != nil {
		return err
	}
	if id == "" {
		return errors.New("create batch: empty batch id")
	}
	return s.updateOutsideLog(func(tx *bolt.Tx) error {
		if err := putFramed(tx, bucketBatchRuns, id, runs); err != nil {
			return err
		}
		return putFramed(tx, bucketBatches, id, record)
	})
}

// PutBatchRecord rewrites a batch's record, durable when it returns: a batch's progress.
func (s *Store) PutBatchRecord(id string, record []byte) error {
	if err := s.usable(); err != nil {
		return err
	}
	if id == "" {
		return errors.New("put batch record: empty batch id")
	}
	return s.updateOutsideLog(func(tx *bolt.Tx) error { return putFramed(tx, bucketBatches, id, record) })
}

// DeleteBatches deletes the records and run lists of the batches named.
func (s *Store) DeleteBatches(ids []string) error {
	if err := s.usable(); err != nil {
		return err
	}
	return s.updateOutsideLog(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketBatches, bucketBatchRuns} {
			b := tx.Bucket(name)
			if b == nil {
				continue
			}
			for _, id := range ids {
				if err := b.Delete([]byte(id)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func putFramed(tx *bolt.Tx, bucket []byte, id string, body []byte) error {
	b, err := tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return err
	}
	return b.Put([]byte(id), frame([]byte(id), body))
}
