// Package storetest is the conformance suite every history.Store passes: MemStore in
// history's tests, boltstore in its own.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// Open makes a fresh, empty store for one test.
type Open func(t *testing.T) history.Store

// Run runs the suite.
func Run(t *testing.T, open Open) {
	t.Run("append and read", func(t *testing.T) { appendAndRead(t, open(t)) })
	t.Run("seq conflict writes nothing", func(t *testing.T) { seqConflict(t, open(t)) })
	t.Run("tasks with events", func(t *testing.T) { tasks(t, open(t)) })
	t.Run("runs filter and order", func(t *testing.T) { runsFilter(t, open(t)) })
	t.Run("runs by search field", func(t *testing.T) { runsSearch(t, open(t)) })
	t.Run("concurrent commits", func(t *testing.T) { concurrent(t, open(t)) })
	t.Run("not found", func(t *testing.T) { notFound(t, open(t)) })
	t.Run("one run twice in a commit", func(t *testing.T) { sameRunTwice(t, open(t)) })
	t.Run("commit after close", func(t *testing.T) { afterClose(t, open(t)) })
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Started returns a new run record and its first event.
func Started(workflowID, runID string, at time.Time) history.RunUpdate {
	return history.RunUpdate{
		Run: history.Run{WorkflowID: workflowID, RunID: runID, Name: "w", Status: history.StatusRunning,
			StartedAt: at, LastSeq: 1},
		Events: []history.Event{{Seq: 1, Type: history.WorkflowStarted, Time: at,
			Data: startedData(workflowID, runID)}},
	}
}

// startedData is the WorkflowStarted payload Started records: the ids, which the run record
// must agree with (history.CheckRecord), and an empty input.
func startedData(workflowID, runID string) []byte {
	return history.MustData(history.Started{WorkflowID: workflowID, RunID: runID, Input: json.RawMessage(`{}`)})
}

// Next appends n events of type typ after r's last one.
func Next(r history.Run, typ history.EventType, n int) history.RunUpdate {
	u := history.RunUpdate{Run: r}
	for range n {
		u.Run.LastSeq++
		u.Events = append(u.Events, history.Event{Seq: u.Run.LastSeq, Type: typ, Time: t0, Step: "steps[0]"})
	}
	return u
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func appendAndRead(t *testing.T, s history.Store) {
	ctx := context.Background()
	u := Started("wf", "r1", t0)
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}))
	u2 := Next(u.Run, history.ActivityScheduled, 3)
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u2}}))
	evs, err := s.Events("r1", 0)
	must(t, err)
	if len(evs) != 4 || evs[0].Type != history.WorkflowStarted || evs[3].Seq != 4 || string(evs[0].Data) != string(startedData("wf", "r1")) {
		t.Fatalf("events = %+v", evs)
	}
	tail, err := s.Events("r1", 2)
	must(t, err)
	if len(tail) != 2 || tail[0].Seq != 3 {
		t.Fatalf("events after 2 = %+v", tail)
	}
	r, err := s.Run("r1")
	must(t, err)
	if r.LastSeq != 4 || r.WorkflowID != "wf" || !r.StartedAt.Equal(t0) {
		t.Fatalf("run = %+v", r)
	}
	if ps := history.Check(r, evs); len(ps) > 0 {
		t.Fatalf("check: %v", ps)
	}
}

func seqConflict(t *testing.T, s history.Store) {
	ctx := context.Background()
	u := Started("wf", "r1", t0)
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}))
	other := Started("wf2", "r2", t0)
	bad := Next(u.Run, history.TimerFired, 1)
	bad.Events[0].Seq = 5
	err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{other, bad}, PutTasks: []history.Task{{ID: "t1", RunID: "r1", Kind: history.TaskTimer}}})
	if !errors.Is(err, history.ErrSeqConflict) {
		t.Fatalf("commit with a gap: err = %v, want ErrSeqConflict", err)
	}
	if _, err := s.Run("r2"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("part of a failed commit was stored: Run(r2) err = %v", err)
	}
	if ts, _ := s.Tasks(); len(ts) != 0 {
		t.Fatalf("tasks of a failed commit were stored: %+v", ts)
	}
	dup := Started("wf", "r1", t0) // starting r1 again would rewrite seq 1
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{dup}}); !errors.Is(err, history.ErrSeqConflict) {
		t.Fatalf("second start of r1: err = %v, want ErrSeqConflict", err)
	}
}

func tasks(t *testing.T, s history.Store) {
	ctx := context.Background()
	u := Started("wf", "r1", t0)
	late := history.Task{ID: "b", RunID: "r1", Kind: history.TaskTimer, AvailableAt: t0.Add(time.Hour), Data: []byte(`{"x":1}`)}
	early := history.Task{ID: "a", RunID: "r1", Kind: history.TaskActivity, AvailableAt: t0}
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{late, early}}))
	ts, err := s.Tasks()
	must(t, err)
	if len(ts) != 2 || ts[0].ID != "a" || ts[1].ID != "b" || string(ts[1].Data) != `{"x":1}` || !ts[1].AvailableAt.Equal(late.AvailableAt) {
		t.Fatalf("tasks = %+v", ts)
	}
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{Next(u.Run, history.TimerFired, 1)}, DeleteTasks: []string{"b"}}))
	ts, err = s.Tasks()
	must(t, err)
	if len(ts) != 1 || ts[0].ID != "a" {
		t.Fatalf("tasks after delete = %+v", ts)
	}
}

func runsFilter(t *testing.T, s history.Store) {
	ctx := context.Background()
	for i := range 5 {
		u := Started(fmt.Sprintf("wf%d", i%2), fmt.Sprintf("r%d", i), t0.Add(time.Duration(i)*time.Minute))
		if i == 3 {
			u.Run.Status = history.StatusCompleted
		}
		must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}))
	}
	all, err := s.Runs(history.RunFilter{})
	must(t, err)
	if len(all) != 5 || all[0].RunID != "r4" || all[4].RunID != "r0" {
		t.Fatalf("runs not newest first: %v", ids(all))
	}
	wf1, err := s.Runs(history.RunFilter{WorkflowID: "wf1"})
	must(t, err)
	if len(wf1) != 2 || wf1[0].RunID != "r3" {
		t.Fatalf("runs of wf1 = %v", ids(wf1))
	}
	done, err := s.Runs(history.RunFilter{Status: history.StatusCompleted})
	must(t, err)
	if len(done) != 1 || done[0].RunID != "r3" {
		t.Fatalf("completed runs = %v", ids(done))
	}
}

func concurrent(t *testing.T, s history.Store) {
	ctx := context.Background()
	const runs, steps = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := Started("wf", fmt.Sprintf("c%d", i), t0)
			if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
				errs <- err
				return
			}
			r := u.Run
			for range steps {
				n := Next(r, history.ActivityCompleted, 1)
				if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{n}}); err != nil {
					errs <- err
					return
				}
				r = n.Run
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range runs {
		evs, err := s.Events(fmt.Sprintf("c%d", i), 0)
		must(t, err)
		if len(evs) != steps+1 {
			t.Fatalf("run c%d has %d events, want %d", i, len(evs), steps+1)
		}
	}
}

func notFound(t *testing.T, s history.Store) {
	if _, err := s.Run("nope"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("Run(nope) err = %v", err)
	}
	if _, err := s.Events("nope", 0); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("Events(nope) err = %v", err)
	}
}

// sameRunTwice: a commit may update a run twice (start it and append to it); each update
// continues the one before it, and a second update that does not is a conflict for the whole
// commit.
func sameRunTwice(t *testing.T, s history.Store) {
	ctx := context.Background()
	u := Started("wf", "r1", t0)
	u2 := Next(u.Run, history.ActivityScheduled, 2)
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u, u2}}))
	evs, err := s.Events("r1", 0)
	must(t, err)
	if r, _ := s.Run("r1"); len(evs) != 3 || r.LastSeq != 3 {
		t.Fatalf("after start and append in one commit: %d events, run %+v", len(evs), r)
	}
	again := Next(u2.Run, history.TimerFired, 1)
	stale := Next(u2.Run, history.TimerFired, 1) // continues seq 3, but again took seq 4
	err = s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{again, stale}})
	if !errors.Is(err, history.ErrSeqConflict) {
		t.Fatalf("two updates of one run that both follow seq 3: err = %v, want ErrSeqConflict", err)
	}
	if evs, _ := s.Events("r1", 0); len(evs) != 3 {
		t.Fatalf("part of a conflicting commit was stored: %d events", len(evs))
	}
}

// afterClose: a closed store refuses commits with ErrClosed.
func afterClose(t *testing.T, s history.Store) {
	must(t, s.Close())
	err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{Started("wf", "r1", t0)}})
	if !errors.Is(err, history.ErrClosed) {
		t.Fatalf("commit after Close: err = %v, want ErrClosed", err)
	}
}

func ids(rs []history.Run) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.RunID
	}
	return out
}

// runsSearch stores search values on run records, changes one with a later commit, and lists
// by them: the store keeps each run's latest values and filters by them.
func runsSearch(t *testing.T, s history.Store) {
	ctx := context.Background()
	vals := []map[string]any{
		{"customer": "ann", "amount": 10.0},
		{"customer": "bob", "amount": 250.5, "paid_at": "2026-01-02T10:00:00Z"},
		{"customer": "ann", "amount": 99.0, "vip": true},
		nil,
	}
	recs := make([]history.Run, len(vals))
	for i, v := range vals {
		u := Started("wf", fmt.Sprintf("r%d", i), t0.Add(time.Duration(i)*time.Minute))
		u.Run.Search = v
		must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}))
		recs[i] = u.Run
	}
	// r0's amount changes with its next event; r3 gets a problem note.
	u := Next(recs[0], history.ActivityCompleted, 1)
	u.Run.Search = map[string]any{"customer": "ann", "amount": 300.0}
	u3 := Next(recs[3], history.ActivityCompleted, 1)
	u3.Run.SearchProblems = map[string]string{"amount": "search field amount: got a string, want a number"}
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u, u3}}))
	got, err := s.Run("r3")
	must(t, err)
	if got.SearchProblems["amount"] == "" || got.Search != nil {
		t.Fatalf("r3 record = %+v, want its problem note and no values", got)
	}
	for _, tc := range []struct {
		conds []history.SearchCond
		want  string
	}{
		{[]history.SearchCond{{Field: "customer", Op: "=", Value: "ann"}}, "[r2 r0]"},
		{[]history.SearchCond{{Field: "customer", Op: "!=", Value: "ann"}}, "[r1]"},
		{[]history.SearchCond{{Field: "customer", Op: "=", Value: "ann"}, {Field: "amount", Op: ">=", Value: "100"}}, "[r0]"},
		{[]history.SearchCond{{Field: "amount", Op: "<", Value: "100"}}, "[r2]"},
		{[]history.SearchCond{{Field: "vip", Op: "=", Value: "true"}}, "[r2]"},
		{[]history.SearchCond{{Field: "paid_at", Op: ">=", Value: "2026-01-02"}}, "[r1]"},
		{[]history.SearchCond{{Field: "paid_at", Op: "<", Value: "2026-01-02"}}, "[]"},
		{[]history.SearchCond{{Field: "nothing", Op: "=", Value: "x"}}, "[]"},
	} {
		runs, err := s.Runs(history.RunFilter{Search: tc.conds})
		must(t, err)
		if got := fmt.Sprint(ids(runs)); got != tc.want {
			t.Errorf("runs where %v = %s, want %s", tc.conds, got, tc.want)
		}
	}
}
