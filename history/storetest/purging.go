package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// Purging is a MemStore that can purge, for tests of what asks a store to purge: Candidates are
// the runs it offers as candidates, and Purged records each PurgeRuns call's ids. It deletes
// nothing: the callers' choice of runs is what such tests check.
type Purging struct {
	*history.MemStore
	Candidates []history.Run
	Purged     [][]string
}

// PurgeCandidates returns the runs of p.Candidates that match.
func (p *Purging) PurgeCandidates(match func(history.Run) bool) ([]history.Run, error) {
	var out []history.Run
	for _, r := range p.Candidates {
		if match(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// PurgeRuns records ids and returns the runs of p.Candidates among them.
func (p *Purging) PurgeRuns(_ context.Context, ids []string, _ func(int)) ([]history.Run, error) {
	p.Purged = append(p.Purged, ids)
	var out []history.Run
	for _, r := range p.Candidates {
		if slices.Contains(ids, r.RunID) {
			out = append(out, r)
		}
	}
	return out, nil
}

// CommitClosed commits n closed runs of 4 events (started, an activity completed, completed),
// 500 runs a commit, the i-th started at first + i*gap, and returns their ids in order: the
// stored runs that purge and read benchmarks work over.
func CommitClosed(tb testing.TB, st history.Store, n int, first time.Time, gap time.Duration) []string {
	tb.Helper()
	ids := make([]string, 0, n)
	var c history.Commit
	flush := func() {
		if err := st.Commit(context.Background(), c); err != nil {
			tb.Fatal(err)
		}
		c = history.Commit{}
	}
	for i := range n {
		id := fmt.Sprintf("run-%07d", i)
		u := Started("wf-"+id, id, first.Add(time.Duration(i)*gap))
		more := Next(u.Run, history.ActivityCompleted, 2)
		end := Next(more.Run, history.WorkflowCompleted, 1)
		end.Events[0].Step = ""
		u.Events = slices.Concat(u.Events, more.Events, end.Events)
		u.Run = end.Run
		u.Run.Status, u.Run.ClosedReason = history.ClosedBy(end.Events[0])
		u.Run.ClosedAt = end.Events[0].Time
		c.Runs = append(c.Runs, u)
		ids = append(ids, id)
		if len(c.Runs) == 500 {
			flush()
		}
	}
	if len(c.Runs) > 0 {
		flush()
	}
	return ids
}
