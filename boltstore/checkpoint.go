package boltstore

import (
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// testHookCheckpoint, set only by tests, is called at each step of a checkpoint, so a crash
// test can kill the process exactly there.
var testHookCheckpoint = func(step string) {}

// testHookSync, set only by tests, is called just before each sync of the database file the
// store asks for, and after each commit bbolt synced itself: what the file holds then is on disk
// once the sync returns. A power-loss test keeps an image of it (powerloss_test.go).
var testHookSync = func() {}

// checkpointer makes checkpoints in the background: bbolt synced, the checkpoint file written for
// the state the writer pinned, the previous pin let go, and the log segments whose records that
// state holds removed. The writer hands it each segment it closes with a pin of the state just
// after the segment's last record (pin.go). A crash at any point of a checkpoint leaves the
// previous checkpoint, whose pages are still pinned, and the segments after it.
type checkpointer struct {
	s *Store

	mu      sync.Mutex
	pending []checkpointItem // oldest first
	closed  bool

	wake   chan struct{} // capacity 1
	exited chan struct{}
	runs   int // checkpoints done, for tests
}

// checkpointItem is a closed segment ("" for none) and, under unsynced commits, a pin of the
// state after its last record; nil under synced commits, when bbolt holds the segment's records
// synced.
type checkpointItem struct {
	segment string
	pin     *bolt.Tx
	head    []byte // the pinned state's meta page head, read by the writer (metaHead)
}

func startCheckpointer(s *Store) *checkpointer {
	c := &checkpointer{s: s, wake: make(chan struct{}, 1), exited: make(chan struct{})}
	go c.loop()
	return c
}

// add hands over a closed segment and its pin.
func (c *checkpointer) add(it checkpointItem) {
	c.mu.Lock()
	c.pending = append(c.pending, it)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// unpin lets go of the pins of the checkpoints not yet made, when the store switches to synced
// commits; their segments are removed at the next checkpoint. The caller holds s.pinMu.
func (c *checkpointer) unpin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.pending {
		if c.pending[i].pin != nil {
			c.pending[i].pin.Rollback()
			c.pending[i].pin = nil
		}
	}
}

// stop ends the loop after any checkpoint under way, and lets go of the pins not checkpointed.
func (c *checkpointer) stop() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.exited
	c.unpin()
}

func (c *checkpointer) loop() {
	defer close(c.exited)
	for range c.wake {
		c.s.pinMu.Lock()
		c.mu.Lock()
		items, closed := c.pending, c.closed
		c.pending = nil
		c.mu.Unlock()
		if len(items) > 0 && c.s.Err() == nil {
			if err := c.s.checkpoint(items); err != nil {
				// bbolt's sync or the checkpoint file failed: its pages may not be on disk while
				// the log was to go. The log stays; the store stops as on a failed commit
				// (docs/reliability.md A5).
				c.s.setFatal(err)
			}
			c.mu.Lock()
			c.runs++
			c.mu.Unlock()
		}
		c.s.pinMu.Unlock()
		if closed {
			return
		}
	}
}

// checkpoint syncs bbolt, saves the newest pinned state as the checkpoint (pins it instead of the
// previous one) and removes the segments, every record of which that state holds, keeping the
// newest for the next spare (recycleLog). Items
// without a pin (synced commits) only remove their segments. The caller holds s.pinMu.
func (s *Store) checkpoint(items []checkpointItem) error {
	testHookCheckpoint("start")
	defer testHookCheckpoint("done")
	var pin *bolt.Tx
	var head []byte
	segs := make([]string, 0, len(items))
	for _, it := range items {
		if it.pin != nil {
			if pin != nil {
				pin.Rollback() // a newer state is checkpointed instead
			}
			pin, head = it.pin, it.head
		}
		if it.segment != "" { // "" asks for a checkpoint without a full segment
			segs = append(segs, it.segment)
		}
	}
	if pin != nil && uint64(pin.ID()) <= s.ckptTxid {
		// A checkpoint the writer made since (a schedule record's) is newer: keep it.
		pin.Rollback()
		pin = nil
	}
	testHookSync()
	if err := s.db.Sync(); err != nil {
		if pin != nil {
			pin.Rollback()
		}
		return fmt.Errorf("checkpoint: sync database: %w", err)
	}
	testHookCheckpoint("synced")
	if pin != nil {
		if err := s.saveCheckpoint(head); err != nil {
			pin.Rollback()
			return fmt.Errorf("checkpoint: %w", err)
		}
		s.setPin(pin)
		s.ckptTxid = uint64(pin.ID())
		testHookCheckpoint("saved")
	}
	if len(segs) > 0 {
		if err := recycleLog(walDir(s.path), segs); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	testHookCheckpoint("removed")
	return nil
}
