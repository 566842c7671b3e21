package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// readCountingStore is a MemStore that counts history reads (a replay reads its run's whole
// history) and can hold every Tasks read after the first at a gate: Resume's own read goes
// through, its background repair waits until the test opens the gate.
type readCountingStore struct {
	*history.MemStore
	reads  atomic.Int64 // Events calls from seq 0: whole histories read
	tasks  atomic.Int64
	gate   chan struct{}
	once   sync.Once
	hooked func() // called once, after the first Tasks read, when set
	skew   string // a run whose record says one event more than its history holds
}

func (s *readCountingStore) Runs(f history.RunFilter) ([]history.Run, error) {
	runs, err := s.MemStore.Runs(f)
	for i := range runs {
		if runs[i].RunID == s.skew {
			runs[i].LastSeq++
		}
	}
	return runs, err
}

func (s *readCountingStore) Events(runID string, after uint64) ([]history.Event, error) {
	if after == 0 {
		s.reads.Add(1)
	}
	return s.MemStore.Events(runID, after)
}

func (s *readCountingStore) Tasks() ([]history.Task, error) {
	ts, err := s.MemStore.Tasks()
	if s.tasks.Add(1) == 1 {
		if s.hooked != nil {
			s.hooked()
		}
	} else if s.gate != nil {
		<-s.gate
	}
	return ts, err
}

func (s *readCountingStore) open() { s.once.Do(func() { close(s.gate) }) }

// resumeOver opens a new engine over the harness's store behind a readCountingStore whose
// later Tasks reads wait at a gate, and Resumes it.
func (h *harness) resumeOver(opts Options, skew string) (*readCountingStore, RecoverReport) {
	h.t.Helper()
	st := &readCountingStore{MemStore: h.store, gate: make(chan struct{}), skew: skew}
	opts.Store, opts.Activities, opts.Clock, opts.Logf = st, h.acts, h.clock, h.t.Logf
	h.e = New(opts)
	e := h.e
	h.t.Cleanup(func() { e.Close() })
	h.t.Cleanup(st.open) // before Close: the background repair must not hold it up
	rep, err := e.Resume(context.Background())
	if err != nil {
		h.t.Fatalf("resume: %v", err)
	}
	return st, rep
}

// TestResumeDoesNotReplayWaitingRuns: a restart over runs that only wait (on a signal,
// on a timer) reads no history before it is ready: Recover replayed every open run first, 84 µs
// a run, 21 s of start with 100,000 of them. Each run is rebuilt on its first input: a signal
// to one, the timer of the other. The repair the start owes then runs in the background and
// replays the runs nothing has touched yet.
func TestResumeDoesNotReplayWaitingRuns(t *testing.T) {
	h := newHarness(t)
	sig := h.write("sig.wend.yaml", head+"steps:\n  - {activity: p.first}\n  - {id: w, wait_for_signal: go}\noutput: \"${{ steps.w.output }}\"\n")
	tim := h.write("tim.wend.yaml", head+"steps: [{activity: p.first}, {delay: 10m}, {activity: p.after}]\n")
	idle := h.write("idle.wend.yaml", head+"steps: [{wait_for_signal: never}]\n")
	h.start(sig, "sig", "null")
	h.start(tim, "tim", "null")
	h.start(idle, "idle", "null")
	h.settle("sig", history.ActivityCompleted)
	h.settle("tim", history.TimerScheduled)
	h.e.Close()

	st, rep := h.resumeOver(Options{IdleAfter: time.Hour}, "")
	if rep.Resumed != 3 || rep.Tasks != 1 || len(rep.Blocked) != 0 {
		t.Fatalf("resume: %+v, want 3 runs and the timer's task", rep)
	}
	if n := st.reads.Load(); n != 0 {
		t.Fatalf("resume read %d histories; a waiting run is replayed on its first input", n)
	}
	if s := h.e.Idle(); s.Open != 3 || s.Resident != 0 || s.Rebuilt != 0 {
		t.Fatalf("%+v, want 3 open runs, none in memory", s)
	}
	if err := h.e.Signal(context.Background(), "sig", "go", json.RawMessage(`"ok"`)); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("sig"); h.output(r) != `"ok"` {
		t.Fatalf("sig: %s", h.output(r))
	}
	h.clock.Advance(10 * time.Minute)
	if r := h.wait("tim"); r.Status != history.StatusCompleted {
		t.Fatalf("tim: %s", r.Status)
	}
	if s := h.e.Idle(); s.Rebuilt != 2 || s.Open != 1 {
		t.Fatalf("%+v, want the two runs that took input rebuilt, the idle one not", s)
	}
	if h.acts.count("first") != 2 || h.acts.count("after") != 1 {
		t.Fatalf("first called %d times, after %d", h.acts.count("first"), h.acts.count("after"))
	}
	st.open()
	rr, err := h.e.ResumeRepaired(context.Background())
	// It listed the open runs when it began, before or after the two runs closed.
	if err != nil || rr.Runs < 1 || len(rr.Rebuilt) != 0 || len(rr.Blocked) != 0 || rr.Skipped != 0 {
		t.Fatalf("the start's repair: %+v, %v; want the open runs checked, nothing to rebuild", rr, err)
	}
	if s := h.e.Idle(); s.Resident != 0 || s.Rebuilt != 3 {
		t.Fatalf("%+v: the repair replays the idle run once and leaves it out of memory", s)
	}
}

// TestResumeRepairsTasksOfRunsItDidNotReplay: Resume registers runs without replaying them,
// yet a task lost while no wend ran or a damaged task record of
// such a run is still rebuilt from its history by the repair it runs in the background, and
// the run goes on.
func TestResumeRepairsTasksOfRunsItDidNotReplay(t *testing.T) {
	for _, how := range []string{"lost", "damaged"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t)
			f := h.write("w.wend.yaml", head+"steps:\n  - delay: 1h\n  - activity: p.a\n")
			r := h.start(f, "r", "null")
			h.start(f, "other", "null")
			h.e.Close()
			task := timerTaskID(r.RunID, "steps[0]")
			var store history.Store = h.store
			switch how {
			case "lost":
				if err := h.store.Commit(context.Background(), history.Commit{DeleteTasks: []string{task}}); err != nil {
					t.Fatal(err)
				}
			case "damaged":
				store = &damagingStore{MemStore: h.store, damaged: map[string]bool{task: true}}
			}
			h.e = New(Options{Store: store, Activities: h.acts, Clock: h.clock, Logf: t.Logf, IdleAfter: time.Hour})
			t.Cleanup(func() { h.e.Close() })
			rep, err := h.e.Resume(context.Background())
			if err != nil || rep.Resumed != 2 {
				t.Fatalf("resume: %+v %v", rep, err)
			}
			rr, err := h.e.ResumeRepaired(context.Background())
			if err != nil || len(rr.Rebuilt) != 1 || rr.Rebuilt[0] != r.RunID+": "+task {
				t.Fatalf("the start's repair: %+v %v, want %s rebuilt", rr, err, task)
			}
			if s := h.e.Idle(); s.Resident != 1 {
				t.Fatalf("%+v: want the repaired run in memory, the other checked and out again", s)
			}
			h.clock.Advance(2 * time.Hour)
			for _, id := range []string{"r", "other"} {
				if got := h.wait(id); got.Status != history.StatusCompleted {
					t.Fatalf("%s: %s", id, got.Status)
				}
			}
		})
	}
}

// TestResumeDropsARunThatDoesNotReplay: a run whose history no longer replays is found by the
// start's repair, reported and no longer driven, as Recover reported it; input before that
// is refused as blocked, never applied.
func TestResumeDropsARunThatDoesNotReplay(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	r := h.start(f, "bad", "null")
	h.start(f, "good", "null")
	h.e.Close()
	st, rep := h.resumeOver(Options{}, r.RunID)
	if rep.Resumed != 2 {
		t.Fatalf("resume: %+v", rep)
	}
	if err := h.e.Signal(context.Background(), "bad", "go", nil); !errors.Is(err, ErrBlocked) {
		t.Fatalf("signal to the run that does not replay: %v, want ErrBlocked", err)
	}
	st.open()
	rr, err := h.e.ResumeRepaired(context.Background())
	if err != nil || len(rr.Blocked) != 1 || !strings.HasPrefix(rr.Blocked[0], r.RunID+" (bad): history check") {
		t.Fatalf("the start's repair: %+v %v, want run %s blocked", rr, err, r.RunID)
	}
	if _, err := h.e.WaitClosed(context.Background(), "bad"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("wait on it: %v, want ErrBlocked", err)
	}
	if err := h.e.Signal(context.Background(), "good", "go", nil); err != nil {
		t.Fatal(err)
	}
	if got := h.wait("good"); got.Status != history.StatusCompleted {
		t.Fatalf("good: %s", got.Status)
	}
	if s := h.e.Idle(); s.Open != 0 {
		t.Fatalf("%+v: the blocked run is still driven", s)
	}
}

// TestRecoverReportsBlockedRunsBeforeItReturns: Recover, which the CLI's run and resume use,
// still replays every open run before it returns and reports those that do not replay.
func TestRecoverReportsBlockedRunsBeforeItReturns(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
	r := h.start(f, "bad", "null")
	h.start(f, "good", "null")
	h.e.Close()
	h.e = New(Options{Store: &readCountingStore{MemStore: h.store, skew: r.RunID}, Activities: h.acts, Clock: h.clock, Logf: t.Logf})
	t.Cleanup(func() { h.e.Close() })
	rep, err := h.e.Recover(context.Background())
	if err != nil || rep.Resumed != 1 || len(rep.Blocked) != 1 || !strings.HasPrefix(rep.Blocked[0], r.RunID) {
		t.Fatalf("recover: %+v %v, want 1 resumed and %s blocked", rep, err, r.RunID)
	}
	if s := h.e.Idle(); s.Open != 1 {
		t.Fatalf("%+v", s)
	}
}

// TestRepairDoesNotRebuildATaskCommittedAfterItsRead: a repair beside live runs read the
// stored tasks, then checked each run against that read; a run that committed a new task in
// between (here its try, marked dispatched and already calling the plugin) seemed to lack it,
// and the repair wrote it back unmarked and called the try a second time. Now such a run is
// checked again against a fresh read.
func TestRepairDoesNotRebuildATaskCommittedAfterItsRead(t *testing.T) {
	h := newHarness(t)
	h.e.Close()
	st := &readCountingStore{MemStore: h.store}
	h.e = New(Options{Store: st, Activities: h.acts, Clock: h.clock, Logf: t.Logf})
	t.Cleanup(func() { h.e.Close() })
	held := make(chan struct{})
	t.Cleanup(func() { close(held) })
	h.acts.fns["held"] = func(ctx context.Context, _ history.ActivityCall) (json.RawMessage, error) {
		select {
		case <-held:
			return json.RawMessage(`1`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}, {activity: p.held}]\n")
	r := h.start(f, "r", "null")
	st.hooked = func() { // right after the repair's read: the run takes a signal and schedules its try
		if err := h.e.Signal(context.Background(), "r", "go", nil); err != nil {
			t.Error(err)
		}
	}
	rep, err := h.e.Repair(context.Background(), "")
	if err != nil || len(rep.Rebuilt) != 0 || rep.Skipped != 0 {
		t.Fatalf("repair: %+v %v, want nothing rebuilt", rep, err)
	}
	ts, _ := h.store.Tasks()
	if len(ts) != 1 || ts[0].RunID != r.RunID || !ts[0].Dispatched {
		t.Fatalf("tasks %+v, want the try's task, still marked dispatched", ts)
	}
}

// TestResumeRepairReturnsItsGarbage: the start's repair replays every open run once,
// and the memory that burst freed goes back to the system when it ends (serve over 100,000
// waiting runs kept 334 MB anonymous after it, with 116 MB of live heap), once, and before
// ResumeRepaired answers; a start with no open run has nothing to return.
func TestResumeRepairReturnsItsGarbage(t *testing.T) {
	var returned atomic.Int64
	old := returnRepairGarbage
	t.Cleanup(func() { returnRepairGarbage = old })
	returnRepairGarbage = func() { returned.Add(1) }
	for _, tc := range []struct {
		name string
		runs int
		want int64
	}{
		{"no open run", 0, 0},
		{"waiting runs", 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			returned.Store(0)
			h := newHarness(t)
			f := h.write("w.wend.yaml", head+"steps: [{wait_for_signal: go}]\n")
			for i := range tc.runs {
				h.start(f, "w"+string(rune('a'+i)), "null")
			}
			h.e.Close()
			st, _ := h.resumeOver(Options{IdleAfter: time.Hour}, "")
			st.open()
			rr, err := h.e.ResumeRepaired(context.Background())
			if err != nil || rr.Runs != tc.runs {
				t.Fatalf("the start's repair: %+v, %v; want %d runs checked", rr, err, tc.runs)
			}
			if got := returned.Load(); got != tc.want {
				t.Fatalf("memory returned %d times after the repair, want %d", got, tc.want)
			}
		})
	}
}

// TestResumeArmsEveryTimerAtItsTime: the timers of runs a start registers without replaying
// them go to the scheduler together (scheduler.addAll), each still due at its own time: after a
// restart, runs whose delays end at 10, 20 and 30 minutes each go on at theirs, not before,
// with the start's background repair held back so only Resume can have armed them.
func TestResumeArmsEveryTimerAtItsTime(t *testing.T) {
	h := newHarness(t)
	order := []struct {
		id    string
		delay time.Duration
	}{{"late", 30 * time.Minute}, {"early", 10 * time.Minute}, {"middle", 20 * time.Minute}}
	for _, r := range order {
		f := h.write(r.id+".wend.yaml", head+"steps: [{delay: "+r.delay.String()+"}, {activity: p.after}]\n")
		h.start(f, r.id, "null")
		h.settle(r.id, history.TimerScheduled)
	}
	h.e.Close()

	_, rep := h.resumeOver(Options{IdleAfter: time.Hour}, "")
	if rep.Resumed != 3 || rep.Tasks != 3 {
		t.Fatalf("resume: %+v, want 3 runs and their 3 timers", rep)
	}
	// armed lists the workflows whose timer the scheduler still holds: the clock's Advance
	// takes due timers out of it before it returns.
	armed := func() string {
		h.e.sched.mu.Lock()
		defer h.e.sched.mu.Unlock()
		var ids []string
		for _, r := range order {
			runs, _ := h.store.Runs(history.RunFilter{WorkflowID: r.id})
			for _, it := range h.e.sched.byID {
				if len(runs) > 0 && it.t.RunID == runs[0].RunID && it.t.Kind == history.TaskTimer {
					ids = append(ids, r.id)
				}
			}
		}
		return strings.Join(ids, ",")
	}
	closed := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var ids []string
			for _, r := range order {
				if h.status(r.id) == history.StatusCompleted {
					ids = append(ids, r.id)
				}
			}
			if strings.Join(ids, ",") == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("at %s closed %v, want %s", h.clock.Now().Sub(t0), ids, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for _, step := range []struct {
		advance       time.Duration
		armed, closed string
	}{
		{0, "late,early,middle", ""},
		{10*time.Minute - time.Second, "late,early,middle", ""},
		{time.Second, "late,middle", "early"},
		{10 * time.Minute, "late", "early,middle"},
		{10 * time.Minute, "", "late,early,middle"},
	} {
		h.clock.Advance(step.advance)
		if got := armed(); got != step.armed {
			t.Fatalf("at %s the scheduler holds the timers of %q, want %q", h.clock.Now().Sub(t0), got, step.armed)
		}
		closed(step.closed)
	}
}
