package storetest

import (
	"context"
	"slices"

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
