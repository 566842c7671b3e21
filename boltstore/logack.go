package boltstore

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Acknowledging a lost log. keyLogLost stays for the database's life: what was lost is a fact
// about its history. Until an operator acknowledges it, Check reports it as a problem; once
// acknowledged (keyLogLossAck: who, and when), Check reports it among its notes instead.

// keyLogLossAck, in the meta bucket, says who acknowledged keyLogLost's note, and when.
var keyLogLossAck = []byte("log_lost_ack")

// ErrNoLogLoss is returned by AcknowledgeLogLoss for a database that never went on without
// its log.
var ErrNoLogLoss = errors.New("the database never went on without its write-ahead log: there is no loss to acknowledge")

// AcknowledgeLogLoss records that who (a user and host) knows the database went on without
// its log, so that Check reports the loss as a note, not a problem. It returns the note
// recorded. Acknowledging again replaces who and when.
func (s *Store) AcknowledgeLogLoss(who string) (string, error) {
	lost, _, err := s.logLoss()
	if err != nil {
		return "", err
	}
	if lost == "" {
		return "", ErrNoLogLoss
	}
	ack := fmt.Sprintf("acknowledged by %s at %s", who, time.Now().UTC().Format(time.RFC3339))
	err = s.updateOutsideLog(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyLogLossAck, []byte(ack)) })
	if err != nil {
		return "", fmt.Errorf("acknowledge the log loss: %w", err)
	}
	return ack, nil
}

// updateOutsideLog runs fn in bbolt's write transaction and makes it durable before it returns,
// for records that do not go through the log: the open transaction, if any, is checkpointed
// with it; else fn's transaction is committed. A failed transaction is fatal, as a failed
// history commit is.
func (s *Store) updateOutsideLog(fn func(tx *bolt.Tx) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	// As the writer: bbolt's write transaction is the writer's, held under writeMu.
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, reused, err := s.beginWrite()
	if err == nil {
		err = guard(func() error { return fn(tx) })
		switch {
		case err != nil && reused:
			s.dropOpen() // with answered commits: the log holds them for the next Open
		case err != nil:
			tx.Rollback()
		case reused:
			err = s.checkpoint()
		default:
			if err = s.commitTx(tx); err == nil {
				testHookSync()
				s.boltTxs.Add(1)
			}
		}
	}
	if err != nil {
		s.setFatal(err)
		return s.Err()
	}
	return nil
}
