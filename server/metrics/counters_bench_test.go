package metrics

import (
	"fmt"
	"testing"

	"github.com/wendflow/wend/history"
)

// BenchmarkCommitCounted is what counting adds to each commit that passes TimeCommits' store
// (begin and end, no store): commits of one event each to runs of 20 events, 100 runs open
// at once, each run's state dropped when it closes as a scrape drops it.
//
//	go test -run '^$' -bench CommitCounted -benchmem ./server/metrics/
func BenchmarkCommitCounted(b *testing.B) {
	const open, events = 100, 20
	k := &counters{ss: newSummaries(), runs: map[string]*runState{}, inflight: map[string]int{}}
	ids := make([]string, 10*open)
	for i := range ids {
		ids[i] = fmt.Sprintf("run-%07d", i)
	}
	c := history.Commit{Runs: []history.RunUpdate{{Events: make([]history.Event, 1)}}}
	u := &c.Runs[0]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		run, seq := (i/open)/events*open+i%open, uint64((i/open)%events+1)
		u.Run = history.Run{RunID: ids[run%len(ids)], Name: "wf", Status: history.StatusRunning, LastSeq: seq}
		u.Events[0] = history.Event{Seq: seq, Type: history.ActivityCompleted}
		k.begin(c)
		k.end(c, nil)
		if seq == events { // closed and summed: its state goes
			k.mu.Lock()
			delete(k.runs, u.Run.RunID)
			k.dirty = k.dirty[:0]
			k.mu.Unlock()
		}
	}
}
