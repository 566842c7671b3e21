package boltstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestValidateRunTwiceInOneCommit: a commit that updates a run twice is checked against its own
// earlier update, in a small commit (searched in order) and in one of many runs (by a map).
func TestValidateRunTwiceInOneCommit(t *testing.T) {
	for _, others := range []int{0, 3, 20} {
		t.Run(fmt.Sprintf("others=%d", others), func(t *testing.T) {
			s := openTemp(t)
			ctx := context.Background()
			var c history.Commit
			u := storetest.Started("wf", "r", t0)
			c.Runs = append(c.Runs, u)
			for i := range others {
				c.Runs = append(c.Runs, storetest.Started("wf", fmt.Sprintf("o%d", i), t0))
			}
			u2 := storetest.Next(u.Run, history.ActivityScheduled, 1)
			c.Runs = append(c.Runs, u2)
			must(t, s.Commit(ctx, c))
			if r, err := s.Run("r"); err != nil || r.LastSeq != 2 {
				t.Fatalf("run after start and append in one commit: %+v %v, want seq 2", r, err)
			}
			// Both follow seq 2: the second conflicts with the first, which took seq 3.
			again := storetest.Next(u2.Run, history.TimerFired, 1)
			c = history.Commit{Runs: []history.RunUpdate{again}}
			for i := range others {
				o := storetest.Started("wf", fmt.Sprintf("o%d", i), t0)
				c.Runs = append(c.Runs, storetest.Next(o.Run, history.TimerFired, 1))
			}
			c.Runs = append(c.Runs, storetest.Next(u2.Run, history.TimerFired, 1))
			if err := s.Commit(ctx, c); !errors.Is(err, history.ErrSeqConflict) {
				t.Fatalf("two updates of one run that both follow seq 2: err = %v, want ErrSeqConflict", err)
			}
			if r, _ := s.Run("r"); r.LastSeq != 2 {
				t.Fatalf("part of a conflicting commit was stored: run at seq %d", r.LastSeq)
			}
		})
	}
}
