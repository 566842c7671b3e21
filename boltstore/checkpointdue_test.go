package boltstore

import (
	"context"
	"path/filepath"
	"testing"
)

func TestCheckpointDue(t *testing.T) {
	for _, c := range []struct {
		since, pending int
		want           bool
	}{
		{0, 0, false},
		{checkpointSoon - 1, 10 * pendingPagesMax, false}, // too soon, however many pending
		{checkpointSoon, pendingPagesMax, false},          // at the bound: not over it
		{checkpointSoon, pendingPagesMax + 1, true},
		{checkpointEvery - 1, 0, false},
		{checkpointEvery, 0, true}, // the longest interval, whatever bbolt holds
		{checkpointEvery + 5, 0, true},
	} {
		if got := checkpointDue(c.since, c.pending); got != c.want {
			t.Errorf("checkpointDue(%d, %d) = %v, want %v", c.since, c.pending, got, c.want)
		}
	}
}

// TestCheckpointSoonOnANewStore: a new store takes every page from its high water mark, so
// under the pin each commit's freed pages stay pending; the writer asks for a checkpoint after
// checkpointSoon transactions instead of checkpointEvery, and the pending pages are released.
func TestCheckpointSoonOnANewStore(t *testing.T) {
	asGiven(t)
	s, err := Open(filepath.Join(t.TempDir(), "wend.db"), Options{})
	must(t, err)
	defer s.Close()
	s.openMax = 1 // as under reads: every batch is a bbolt transaction (opentx.go)
	next := stepCommits("r")
	n := checkpointSoon + 10
	if n >= checkpointEvery {
		t.Fatalf("checkpointSoon %d is not sooner than checkpointEvery %d", checkpointSoon, checkpointEvery)
	}
	for range n {
		must(t, s.Commit(context.Background(), next()))
	}
	s.ckpt.stop() // waits for the checkpoint under way, and the ones it was handed
	runs := s.ckpt.runs
	s.ckpt = startCheckpointer(s) // for Close
	if runs == 0 {
		t.Fatalf("no checkpoint after %d commits on a new store", n)
	}
	// The next write transaction releases what the checkpoint's pin no longer holds.
	must(t, s.Commit(context.Background(), next()))
	if n := s.db.Stats().PendingPageN; n > pendingPagesMax {
		t.Fatalf("%d pages pending after the checkpoint, want at most %d", n, pendingPagesMax)
	}
}
