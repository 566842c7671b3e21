package boltstore

import "fmt"

// testHookCheckpoint, set only by tests, is called at each step of a checkpoint, so a crash
// test can kill the process exactly there.
var testHookCheckpoint = func(step string) {}

// testHookSync, set only by tests, is called after each bbolt commit (bbolt syncs every one):
// what the file holds then is on disk. A power-loss test keeps an image of it
// (powerloss_test.go).
var testHookSync = func() {}

// Checkpoints (docs/design.md, "One sync per commit"). With the log, the writer applies each
// batch into bbolt's write transaction and leaves it open (opentx.go); the batch is durable
// once its log record is synced. A checkpoint commits that transaction, an ordinary bbolt
// commit that bbolt syncs, holding the LSN of the last record it applied (keyLogLSN) and the
// first of the segment appended to (keyLogTail, walcheck.go). The file
// is then a plain bbolt database holding every record up to that LSN, and the log segments
// closed before it are removed. A crash at any moment leaves bbolt at its last checkpoint (bbolt
// writes its meta page only after its data, each synced) and the log past it, which Open
// replays.

// checkpoint commits the open transaction and removes the log segments closed since the last
// checkpoint: every record in them is in bbolt, synced. writeMu is held. A failed commit stops
// the store; the log keeps what the transaction held, for the next Open.
func (s *Store) checkpoint() error {
	testHookCheckpoint("start")
	defer testHookCheckpoint("done")
	if err := s.markLogTail(); err != nil {
		s.setFatal(fmt.Errorf("checkpoint: %w", err))
		return s.Err()
	}
	if err := s.commitOpen(); err != nil {
		return err
	}
	testHookCheckpoint("synced")
	if len(s.closedSegs) > 0 {
		if err := recycleLog(walDir(s.path), s.closedSegs); err != nil {
			err = fmt.Errorf("checkpoint: %w", err)
			s.setFatal(err)
			return s.Err()
		}
		s.closedSegs = s.closedSegs[:0]
	}
	testHookCheckpoint("removed")
	s.checkpoints.Add(1)
	return nil
}
