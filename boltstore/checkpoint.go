package boltstore

import (
	"fmt"
	"sync"
)

// testHookCheckpoint, set only by tests, is called at each step of a checkpoint, so a crash
// test can kill the process exactly there.
var testHookCheckpoint = func(step string) {}

// testHookSynced, set only by tests, is called after each sync of the database file the store
// makes itself, so a power-loss test knows what the disk holds.
var testHookSynced = func() {}

// checkpointer syncs bbolt in the background and then removes the log segments whose records
// bbolt held when it was asked: a checkpoint. The writer hands it each segment it closes, after
// the transaction of that segment's last record committed, so syncing bbolt makes every record
// of the segment durable there and the segment can go. A crash at any point of a checkpoint
// leaves segments bbolt already holds, which replay skips by their LSN.
type checkpointer struct {
	s *Store

	mu      sync.Mutex
	pending []string // closed segments, oldest first
	closed  bool

	wake   chan struct{} // capacity 1
	exited chan struct{}
	runs   int // checkpoints done, for tests
}

func startCheckpointer(s *Store) *checkpointer {
	c := &checkpointer{s: s, wake: make(chan struct{}, 1), exited: make(chan struct{})}
	go c.loop()
	return c
}

// add hands over a closed segment.
func (c *checkpointer) add(segment string) {
	c.mu.Lock()
	c.pending = append(c.pending, segment)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// stop ends the loop after any checkpoint under way.
func (c *checkpointer) stop() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.exited
}

func (c *checkpointer) loop() {
	defer close(c.exited)
	for range c.wake {
		c.mu.Lock()
		segs, closed := c.pending, c.closed
		c.pending = nil
		c.mu.Unlock()
		if len(segs) > 0 {
			if err := c.s.checkpoint(segs); err != nil {
				// bbolt's sync failed: its pages may not be on disk while the log was to go. The
				// log stays; the store stops as on a failed commit (docs/reliability.md A5).
				c.s.setFatal(err)
			}
			c.mu.Lock()
			c.runs++
			c.mu.Unlock()
		}
		if closed {
			return
		}
	}
}

// checkpoint syncs bbolt and removes segments, every record of which it holds.
func (s *Store) checkpoint(segs []string) error {
	testHookCheckpoint("start")
	defer testHookCheckpoint("done")
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("checkpoint: sync database: %w", err)
	}
	testHookSynced()
	testHookCheckpoint("synced")
	if err := removeLog(walDir(s.path), segs); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	testHookCheckpoint("removed")
	return nil
}
