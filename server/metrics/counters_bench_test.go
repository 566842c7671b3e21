package metrics

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
)

// benchSpec is the spec text the benchmarks' runs record: six activities in sequence, the
// second of which retries without end.
const benchSpec = `wend: v1
name: wf
plugins: {demo: ./demo}
steps:
  - {id: a, activity: demo.echo}
  - {id: b, activity: demo.flaky, retry: {tries: 100000, backoff: [1s]}}
  - {id: c, activity: demo.echo}
  - {id: d, activity: demo.echo}
  - {id: e, activity: demo.echo}
  - {id: f, activity: demo.echo}
`

var benchT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchEvent is the n-th event (from 1) of a run of benchSpec: kind "steps" goes through the
// six steps, a try each (20 events with the close), "retries" has step b fail and retry
// without end, "timer" waits on a timer after its start, "signal" too, of a spec that also
// waits for a signal.
func benchEvent(runID, kind string, n int) history.Event {
	ev := history.Event{Seq: uint64(n), Time: benchT0.Add(time.Duration(n) * time.Millisecond)}
	if n == 1 {
		source := benchSpec
		if kind == "signal" {
			source += "  - {id: ok, wait_for_signal: approve}\n"
		}
		ev.Type = history.WorkflowStarted
		ev.Data = history.MustData(history.Started{WorkflowID: "w-" + runID, RunID: runID, SpecFile: "/srv/flows/wf.wend.yaml",
			SpecSource: source, SpecSHA256: "3f9a1c", Input: []byte(`{"order":"A-1042","amount":1250}`)})
		return ev
	}
	schedule := func(step string) {
		ev.Type, ev.Step, ev.ActivityExecutionID, ev.Attempt = history.ActivityScheduled, step, runID+":"+step, 1
		ev.Data = history.MustData(history.ActivitySchedule{Plugin: "demo", Activity: "echo", Input: []byte(`{"order":"A-1042"}`)})
	}
	switch kind {
	case "signal":
		return benchEvent(runID, "timer", n)
	case "timer":
		ev.Type, ev.Step = history.TimerScheduled, "steps[0]"
		ev.Data = history.MustData(history.TimerSchedule{TimerID: fmt.Sprintf("%s/t%d", runID, n), FireAt: benchT0.Add(72 * time.Hour), Purpose: "delay"})
		return ev
	case "retries":
		if n == 2 {
			schedule("steps[1]")
			return ev
		}
		try := (n-3)/3 + 1
		ev.Step, ev.ActivityExecutionID, ev.Attempt = "steps[1]", runID+":steps[1]", try
		switch (n - 3) % 3 {
		case 0:
			ev.Type = history.ActivityStarted
		case 1:
			ev.Type = history.ActivityAttemptFailed
			ev.Data = history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryActivity, Type: "Busy", Message: "try later"}})
		case 2:
			ev.Type = history.ActivityRetryScheduled
			ev.Data = history.MustData(history.RetrySchedule{RetryAfterAttempt: try, NextAttempt: try + 1, AvailableAt: ev.Time.Add(time.Second)})
		}
		return ev
	}
	if n == 20 {
		ev.Type, ev.Data = history.WorkflowCompleted, history.MustData(history.Closed{Output: []byte(`{"ok":true}`)})
		return ev
	}
	step := fmt.Sprintf("steps[%d]", (n-2)/3)
	switch (n - 2) % 3 {
	case 0:
		schedule(step)
		return ev
	case 1:
		ev.Type = history.ActivityStarted
	case 2:
		ev.Type, ev.Data = history.ActivityCompleted, history.MustData(history.ActivityResult{Output: []byte(`{"order":"A-1042","ok":true}`)})
	}
	ev.Step, ev.ActivityExecutionID, ev.Attempt = step, runID+":"+step, 1
	return ev
}

func benchCounters() *counters {
	// settling: no settle aside, which needs a feed.
	return &counters{ss: newSummaries(), st: history.NewMemStore(), runs: map[string]*runState{}, inflight: map[string]int{}, settling: true}
}

// BenchmarkCommitCounted is what counting adds to each commit that passes TimeCommits' store
// (begin and end, no store): commits of one event each to runs of 20 events (six activities
// and the close), 100 runs open at once, each run's state dropped when it closes as a scrape
// drops it.
//
//	go test -run '^$' -bench CommitCounted -benchmem ./server/metrics/
func BenchmarkCommitCounted(b *testing.B) {
	const open, events = 100, 20
	k := benchCounters()
	ids := make([]string, 10*open)
	for i := range ids {
		ids[i] = fmt.Sprintf("run-%07d", i)
	}
	evs := make([][]history.Event, len(ids))
	for i, id := range ids {
		for n := 1; n <= events; n++ {
			evs[i] = append(evs[i], benchEvent(id, "steps", n))
		}
	}
	c := history.Commit{Runs: []history.RunUpdate{{Events: make([]history.Event, 1)}}}
	u := &c.Runs[0]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		run, seq := ((i/open)/events*open+i%open)%len(ids), (i/open)%events+1
		u.Run = history.Run{RunID: ids[run], Name: "wf", Status: history.StatusRunning, LastSeq: uint64(seq)}
		u.Events[0] = evs[run][seq-1]
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

// foldHeld folds the states' events as a settle does.
func foldHeld(k *counters) {
	for id, s := range k.runs {
		s.summarize(id, s.run.record(), k.st, &k.shapes)
	}
}

// BenchmarkHeldRunBytes is the heap a held open run's state takes once settled (bytes/run,
// after a collection): a run waiting on a timer after 3 events, and a run of 1,000 events retrying one
// activity. Each run's events are made for it and passed to the counters as commits do.
//
//	go test -run '^$' -bench HeldRunBytes -benchtime 1x ./server/metrics/
func BenchmarkHeldRunBytes(b *testing.B) {
	for _, c := range []struct {
		name         string
		kind         string
		runs, events int
	}{{"waiting-3-events", "timer", 2000, 3}, {"retrying-1000-events", "retries", 50, 1000}, {"waiting-on-a-signal-3-events", "signal", 2000, 3}} {
		b.Run(c.name, func(b *testing.B) {
			var perRun float64
			for b.Loop() {
				k := benchCounters()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for r := range c.runs {
					id := fmt.Sprintf("run-%07d", r)
					for n := 1; n <= c.events; n++ {
						cm := history.Commit{Runs: []history.RunUpdate{{Run: history.Run{RunID: id, Name: "wf", Status: history.StatusRunning,
							LastSeq: uint64(n)}, Events: []history.Event{benchEvent(id, c.kind, n)}}}}
						k.begin(cm)
						k.end(cm, nil)
					}
				}
				k.mu.Lock()
				k.dirty = nil
				k.mu.Unlock()
				foldHeld(k)
				runtime.GC()
				runtime.ReadMemStats(&after)
				perRun = float64(after.HeapAlloc-before.HeapAlloc) / float64(c.runs)
				runtime.KeepAlive(k)
			}
			b.ReportMetric(perRun, "bytes/run")
		})
	}
}

// settledStore is TimeCommits over a boltstore in dir, and a settle of its counters as a
// scrape makes one.
func settledStore(b *testing.B) (commit func(id, kind string, from, to int), settle func()) {
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "wend.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	m := New("")
	ts := m.TimeCommits(st)
	<-m.CaughtUp()
	commit = func(id, kind string, from, to int) {
		u := history.RunUpdate{Run: history.Run{WorkflowID: "w-" + id, RunID: id, Name: "wf", Status: history.StatusRunning, LastSeq: uint64(to)}}
		for n := from; n <= to; n++ {
			u.Events = append(u.Events, benchEvent(id, kind, n))
		}
		if err := ts.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
			b.Fatal(err)
		}
	}
	settle = func() {
		k := m.counters
		k.ss.mu.Lock()
		defer k.ss.mu.Unlock()
		if err := k.settle(); err != nil {
			b.Fatal(err)
		}
	}
	return commit, settle
}

// BenchmarkSettleOfNewRuns is what a scrape costs for 100 runs started since the last, each
// waiting on a timer after 3 events (ReadsBesideWrites' starts): a settle of the counters over
// a boltstore, which sums the runs and keeps their summaries (the commits are not timed).
//
//	go test -run '^$' -bench SettleOfNewRuns -benchtime 20x ./server/metrics/
func BenchmarkSettleOfNewRuns(b *testing.B) {
	commit, settle := settledStore(b)
	runs := 0
	for b.Loop() {
		b.StopTimer()
		for range 100 {
			commit(fmt.Sprintf("run-%07d", runs), "timer", 1, 3)
			runs++
		}
		b.StartTimer()
		settle()
	}
}

// BenchmarkSettleOfALongRun is what a scrape costs for one open run that committed a try (3
// events) since the last, by the run's length: a settle of the counters over a boltstore,
// which sums the run again and keeps its summary (the commits are not timed).
//
//	go test -run '^$' -bench SettleOfALongRun -benchtime 100x ./server/metrics/
func BenchmarkSettleOfALongRun(b *testing.B) {
	for _, length := range []int{101, 3002} {
		b.Run(fmt.Sprint(length, "-events"), func(b *testing.B) {
			commitRun, settle := settledStore(b)
			const id = "long"
			commit := func(from, to int) { commitRun(id, "retries", from, to) }
			for from := 1; from <= length; from += 500 {
				commit(from, min(from+499, length))
			}
			settle()
			last := length
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				commit(last+1, last+3)
				last += 3
				b.StartTimer()
				settle()
			}
		})
	}
}
