package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/testkit/enginetest"
)

const tickFile = `wend: v1
name: tick
input: {type: object, required: [n]}
schedules:
  - {id: minutely, cron: "* * * * *", timezone: Europe/Paris, input: {n: 1}}
steps:
  - {id: s, steps: []}
`

func newRunner(t *testing.T, states *MemStore, runs *history.MemStore, now func() time.Time) (*Runner, *engine.Engine) {
	t.Helper()
	w, ds := spec.Load("tick.wend.yaml", []byte(tickFile))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	eng := enginetest.New(t, engine.Options{Store: runs})
	rn, err := New(Options{Store: states, Runs: runs, Engine: eng, Now: now,
		Entries: []Entry{{Workflow: w.Name, File: "tick.wend.yaml", Source: []byte(tickFile), Schedule: w.Schedules[0]}}})
	if err != nil {
		t.Fatal(err)
	}
	return rn, eng
}

// TestBackfillOfThousandFiresStartsThousandRuns: a backfill of 1,000 minutes under
// allow_all is recorded at once, then started by the runner: 1,000 runs, each with the
// schedule's input and the workflow id of its minute; backfilling the same range again
// starts nothing new.
func TestBackfillOfThousandFiresStartsThousandRuns(t *testing.T) {
	states, runs := &MemStore{}, history.NewMemStore()
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	rn, _ := newRunner(t, states, runs, func() time.Time { return now })
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	n, err := rn.Backfill("minutely", from, from.Add(1000*time.Minute), schedule.AllowAll)
	if err != nil || n != 1000 {
		t.Fatalf("backfill = %d, %v", n, err)
	}
	if v, _ := rn.Show("minutely"); len(v.State.Starting) != 1000 {
		t.Fatalf("recorded %d fires to start before any run, want 1000", len(v.State.Starting))
	}
	if err := rn.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	all, err := runs.Runs(history.RunFilter{})
	if err != nil || len(all) != 1000 {
		t.Fatalf("%d runs (%v), want 1000", len(all), err)
	}
	for _, at := range []time.Time{from, from.Add(999 * time.Minute)} {
		rs, _ := runs.Runs(history.RunFilter{WorkflowID: schedule.WorkflowID("minutely", at)})
		if len(rs) != 1 || rs[0].Status != history.StatusCompleted {
			t.Fatalf("run of %s: %+v", at, rs)
		}
	}
	if _, err := rn.Backfill("minutely", from, from.Add(1000*time.Minute), schedule.AllowAll); err != nil {
		t.Fatal(err)
	}
	if err := rn.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if all, _ := runs.Runs(history.RunFilter{}); len(all) != 1000 {
		t.Fatalf("a second backfill of the same range made %d runs, want still 1000", len(all))
	}
}

// TestRecordedFireStartsAfterRestart: a fire recorded by one runner whose process died
// before starting its run is started by the next runner over the same state, once.
func TestRecordedFireStartsAfterRestart(t *testing.T) {
	states, runs := &MemStore{}, history.NewMemStore()
	now := time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	rn, _ := newRunner(t, states, runs, clock)
	if _, err := rn.Trigger("minutely", ""); err != nil { // recorded, not started: no Tick ran
		t.Fatal(err)
	}
	if all, _ := runs.Runs(history.RunFilter{}); len(all) != 0 {
		t.Fatalf("trigger started %d runs itself", len(all))
	}
	rn2, _ := newRunner(t, states, runs, clock) // "after the crash"
	for range 2 {
		if err := rn2.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := runs.Runs(history.RunFilter{})
	if len(all) != 1 || all[0].WorkflowID != schedule.WorkflowID("minutely", now) {
		t.Fatalf("runs after restart: %+v", all)
	}
}

func TestUnknownScheduleIsNotFound(t *testing.T) {
	rn, _ := newRunner(t, &MemStore{}, history.NewMemStore(), time.Now)
	if _, err := rn.Pause("nope", ""); err == nil {
		t.Fatal("pausing an unknown schedule succeeded")
	}
	if _, err := rn.Backfill("minutely", time.Unix(10, 0), time.Unix(5, 0), ""); err == nil {
		t.Fatal("a backward range was taken")
	}
}

// TestScheduleIDInTwoFilesStopsTheStart: two registered files declaring one schedule id would
// share its runs' workflow ids; serve refuses to start, naming both files.
func TestScheduleIDInTwoFilesStopsTheStart(t *testing.T) {
	w, ds := spec.Load("tick.wend.yaml", []byte(tickFile))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	_, err := New(Options{Store: &MemStore{}, Runs: history.NewMemStore(), Entries: []Entry{
		{Workflow: "tick", File: "a.wend.yaml", Schedule: w.Schedules[0]},
		{Workflow: "tick", File: "b.wend.yaml", Schedule: w.Schedules[0]}}})
	if err == nil || !strings.Contains(err.Error(), `"minutely" is declared in a.wend.yaml and b.wend.yaml`) {
		t.Fatalf("New = %v, want the duplicate named with both files", err)
	}
}

// TestStopActsOnTheFiresItRecorded: a stop that lands while a tick records a due fire (here
// the clock read inside the tick cancels it) starts that fire's run before the tick returns,
// and decides nothing more: a clean stop of serve leaves no recorded fire unstarted.
func TestStopActsOnTheFiresItRecorded(t *testing.T) {
	states, runs := &MemStore{}, history.NewMemStore()
	now := time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)
	var stop func()
	clock := func() time.Time {
		if stop != nil {
			stop()
		}
		return now
	}
	rn, _ := newRunner(t, states, runs, clock)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now, stop = now.Add(time.Minute), cancel // the 10:01 fire is due; the tick's clock read stops the runner
	if err := rn.Tick(ctx); err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	if v, _ := rn.Show("minutely"); len(v.State.Starting) != 0 {
		t.Fatalf("the stop left %d recorded fires unstarted", len(v.State.Starting))
	}
	all, _ := runs.Runs(history.RunFilter{})
	if len(all) != 1 || all[0].WorkflowID != schedule.WorkflowID("minutely", time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)) {
		t.Fatalf("runs after the stop: %+v", all)
	}

	now = now.Add(time.Minute) // the 10:02 fire is due, but the runner is stopping: not decided
	if err := rn.Tick(ctx); err == nil {
		t.Fatal("a tick after the stop returned no error")
	}
	if v, _ := rn.Show("minutely"); len(v.State.Starting) != 0 {
		t.Fatalf("a stopped runner recorded %d fires", len(v.State.Starting))
	}
	if all, _ := runs.Runs(history.RunFilter{}); len(all) != 1 {
		t.Fatalf("a stopped runner started %d runs, want still 1", len(all))
	}
}
