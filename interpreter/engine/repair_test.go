package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

func TestRetryResumesFromTheFailedStep(t *testing.T) {
	h := newHarness(t)
	fail := true
	var charges []history.ActivityCall
	h.acts.fns["charge"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
		charges = append(charges, c)
		if fail {
			return nil, &history.ActivityError{Type: "Down", Message: "bank down"}
		}
		return json.RawMessage(`"paid"`), nil
	}
	f := h.write("w.wend.yaml", head+`
steps:
  - {id: reserve, activity: p.reserve, with: 1}
  - {id: charge, activity: p.charge, retry: {tries: 2, backoff: [1s]}}
output: "${{ [steps.reserve.output, steps.charge.output] }}"
`)
	h.start(f, "o", "null")
	first := h.wait("o")
	if first.Status != history.StatusFailed {
		t.Fatalf("first run %s", first.Status)
	}
	fail = false
	r, err := h.e.Retry(context.Background(), "o")
	if err != nil {
		t.Fatal(err)
	}
	if r.RunID == first.RunID {
		t.Fatal("retry reused the failed run")
	}
	done := h.wait("o")
	if done.RunID != r.RunID || h.output(done) != `[1,"paid"]` {
		t.Fatalf("retried run %s: %s", done.Status, h.output(done))
	}
	if h.acts.count("reserve") != 1 {
		t.Fatalf("reserve ran %d times; completed steps must not run again", h.acts.count("reserve"))
	}
	if len(charges) != 3 || charges[2].ActivityExecutionID != charges[0].ActivityExecutionID || charges[2].Attempt != 3 {
		t.Fatalf("charge calls: %+v", charges)
	}
	// The same run cannot be retried twice: it completed.
	if _, err := h.e.Retry(context.Background(), "o"); err == nil || !strings.Contains(err.Error(), "completed") || !errors.Is(err, ErrNotRetryable) {
		t.Fatalf("second retry: %v", err)
	}
}

func TestRetryRefusesACompensatedRun(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["charge"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		return nil, &history.ActivityError{Message: "declined", NonRetryable: true}
	}
	f := h.write("w.wend.yaml", head+"compensate_on_failure: true\nsteps:\n  - {activity: p.a, compensate_with: {activity: p.undo}}\n  - activity: p.charge\n")
	h.start(f, "c", "null")
	h.wait("c")
	_, err := h.e.Retry(context.Background(), "c")
	if err == nil || !strings.Contains(err.Error(), "compensated") || !errors.Is(err, ErrNotRetryable) {
		t.Fatalf("retry of a compensated run: %v", err)
	}
}

func TestRepairRebuildsALostTask(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps:\n  - delay: 1m\n  - activity: p.a\n")
	h.start(f, "r", "null")
	rep, err := h.e.Repair(context.Background(), "r")
	if err != nil || len(rep.Rebuilt) != 0 {
		t.Fatalf("healthy run repaired: %+v %v", rep, err)
	}
	ts, _ := h.store.Tasks()
	if len(ts) != 1 {
		t.Fatalf("tasks %+v", ts)
	}
	// Lose the timer's task (a bug, a hand-edited database) and stop its in-memory timer.
	h.e.sched.remove(ts[0].ID)
	runs, _ := h.store.Runs(history.RunFilter{WorkflowID: "r"})
	if err := h.store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: runs[0]}}, DeleteTasks: []string{ts[0].ID}}); err != nil {
		t.Fatal(err)
	}
	rep, err = h.e.Repair(context.Background(), "")
	if err != nil || len(rep.Rebuilt) != 1 || !strings.Contains(rep.Rebuilt[0], ts[0].ID) {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	if r := h.wait("r"); r.Status != history.StatusCompleted {
		t.Fatalf("repaired run %s", r.Status)
	}
	if _, err := h.e.Repair(context.Background(), "nope"); err != nil && !errors.Is(err, history.ErrNotFound) {
		t.Fatal(err)
	}
}

// indexedStore is a store whose indexes a repair rebuilds (history.IndexRepairer).
type indexedStore struct {
	*history.MemStore
	calls int
	fixes []string
	err   error
}

func (s *indexedStore) RepairIndexes() ([]string, error) {
	s.calls++
	return s.fixes, s.err
}

// TestRepairOfEveryRunRepairsTheIndexes: a repair of every run (wend repair, the watchdog, a
// start's repair) has the store rebuild its indexes and reports what changed; a repair of one
// workflow leaves them, and a store that cannot rebuild them fails the repair.
func TestRepairOfEveryRunRepairsTheIndexes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		workflow  string
		fixes     []string
		err       error
		wantCalls int
		wantErr   bool
	}{
		{name: "every run, sound", wantCalls: 1},
		{name: "every run, entries put right", fixes: []string{`search index: put run "r", customer = "ann"`}, wantCalls: 1},
		{name: "one workflow", workflow: "w", fixes: []string{"never asked"}, wantCalls: 0},
		{name: "the store fails", err: errors.New("disk gone"), wantCalls: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &indexedStore{MemStore: history.NewMemStore(), fixes: tc.fixes, err: tc.err}
			e := New(Options{Store: st, Activities: &fakeActs{}, Clock: NewFakeClock(t0), Logf: t.Logf})
			defer e.Close()
			rep, err := e.Repair(context.Background(), tc.workflow)
			if (err != nil) != tc.wantErr || st.calls != tc.wantCalls {
				t.Fatalf("repair: %v, %d index repairs; want error %v, %d", err, st.calls, tc.wantErr, tc.wantCalls)
			}
			var want []string
			if tc.wantCalls == 1 && !tc.wantErr {
				want = tc.fixes
			}
			if strings.Join(rep.Indexes, "|") != strings.Join(want, "|") {
				t.Fatalf("indexes reported %q, want %q", rep.Indexes, want)
			}
		})
	}
}
