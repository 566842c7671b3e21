package server

import (
	"slices"

	"github.com/wendflow/wend/history"
)

// RunTally is how many runs there are in each status and which workflow names they have:
// the web UI's counts and its workflow filter.
type RunTally struct {
	Total    int
	ByStatus map[string]int
	Names    []string // sorted
	// Changes is a position that moves whenever a run commits or is purged (0 when the store
	// keeps no change feed): with the counts, it tells a page whether to redraw.
	Changes uint64
}

// runCounter is a store that keeps its runs' counts at commit (boltstore.Store.RunCounts).
type runCounter interface {
	RunCounts() (map[string]map[string]int, error)
}

// changeFeed is a store that numbers its changes (boltstore.Store.ChangedRuns).
type changeFeed interface {
	ChangedRuns(since uint64) (ids []string, now uint64, complete bool)
}

// Tally counts the runs: from the store's counts, one short read whatever the number of runs,
// where it keeps them; else from a listing of every run.
func (s *Server) Tally() (RunTally, error) {
	t := RunTally{ByStatus: map[string]int{}}
	names := map[string]bool{}
	add := func(name, status string, n int) {
		if n > 0 {
			t.Total += n
			t.ByStatus[status] += n
			names[name] = true
		}
	}
	if rc, ok := s.store.(runCounter); ok && s.cluster == nil {
		counts, err := rc.RunCounts()
		if err != nil {
			return RunTally{}, wrap(err)
		}
		for name, by := range counts {
			for status, n := range by {
				add(name, status, n)
			}
		}
		if cf, ok := s.store.(changeFeed); ok {
			_, t.Changes, _ = cf.ChangedRuns(^uint64(0))
		}
	} else {
		runs, err := s.List(history.RunFilter{})
		if err != nil {
			return RunTally{}, err
		}
		for _, r := range runs {
			add(r.Name, r.Status, 1)
		}
	}
	for n := range names {
		t.Names = append(t.Names, n)
	}
	slices.Sort(t.Names)
	return t, nil
}

// CursorAfter is the ListQuery cursor of the position just after r in newest-first order:
// a page that ends at r goes on from it.
func CursorAfter(r history.Run) string { return encodeCursor(r.StartedAt, r.RunID) }
