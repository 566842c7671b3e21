package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

func TestActivityStep(t *testing.T) {
	src := sim.Head + `steps:
  - id: a
    activity: p.echo
    with: {x: "${{ input.x }}"}
  - id: b
    activity: p.echo
    with: "${{ steps.a.output.x }}"
    timeout: 5m
    heartbeat_timeout: 10s
output: "${{ steps.b.output }}"
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, map[string]any{"x": 7}, nil))
	if got := output(t, e); got != "7" {
		t.Fatalf("output %s", got)
	}
	local := sim.New(t, src, map[string]any{"x": 7})
	local.RunActivities(sim.Echo)
	sameAsLocal(t, evs, local)

	tries := p.triesOf("echo")
	if len(tries) != 2 {
		t.Fatalf("%d tries", len(tries))
	}
	st, _ := history.DataOf[history.Started](evs[0])
	for i, tr := range tries {
		// ActivityID is wend's task id; the call names the run Temporal runs.
		if want := interpreter.TaskID(tr.Call.ActivityExecutionID, tr.Call.Attempt); tr.ActivityID != want {
			t.Errorf("try %d: ActivityID %q, want %q", i, tr.ActivityID, want)
		}
		if tr.Call.RunID != st.RunID || tr.Call.RunID == "" || tr.Call.WorkflowID != "wf" {
			t.Errorf("try %d: call names run %q/%q, the run is %q", i, tr.Call.WorkflowID, tr.Call.RunID, st.RunID)
		}
		if tr.Call.Declared.Dir != "/flows" || len(tr.Call.Declared.Command) == 0 {
			t.Errorf("try %d: declared plugin %+v", i, tr.Call.Declared)
		}
	}
	// Every try has the liveness heartbeat timeout, so a dead worker is noticed in seconds;
	// the step's heartbeat_timeout goes to the worker to enforce on the plugin's beats.
	if tries[0].Heartbeat != livenessTimeout || tries[0].StartClose != DefaultStartToClose {
		t.Errorf("defaults: heartbeat %s start-to-close %s", tries[0].Heartbeat, tries[0].StartClose)
	}
	if !tries[0].Liveness || !tries[1].Liveness || tries[0].StepBeatMS != 0 || tries[1].StepBeatMS != 10000 {
		t.Errorf("liveness %v %v, step heartbeat_timeout %d %d; want true true 0 10000", tries[0].Liveness, tries[1].Liveness, tries[0].StepBeatMS, tries[1].StepBeatMS)
	}
	if tries[1].Heartbeat != livenessTimeout || tries[1].StartClose != 5*time.Minute {
		t.Errorf("step timeouts: heartbeat %s start-to-close %s", tries[1].Heartbeat, tries[1].StartClose)
	}
	if !tries[1].Call.Deadline.Equal(tries[1].At.Add(5 * time.Minute)) {
		t.Errorf("deadline %s, started %s", tries[1].Call.Deadline, tries[1].At)
	}
	// Started carries Temporal's ids and the first run's start.
	if st.WorkflowID != "wf" || st.RunID == "" || !st.ExecutionStarted.Equal(sim.T0) || st.SpecSHA256 == "" {
		t.Errorf("started %+v", st)
	}
	for _, ev := range evs {
		if ev.Time.Before(sim.T0) || ev.Time.Location() != time.UTC {
			t.Errorf("event %d time %s", ev.Seq, ev.Time)
		}
	}
}

func TestIfSetOutput(t *testing.T) {
	src := sim.Head + `steps:
  - id: a
    activity: p.echo
    with: {n: 2}
    set: {seen: "${{ output.n }}"}
  - id: skipped
    if: "${{ state.seen > 5 }}"
    activity: p.echo
    with: {never: true}
  - id: taken
    if: "${{ state.seen == 2 }}"
    activity: p.echo
    with: {twice: "${{ state.seen * 2 }}"}
    set: {taken: "${{ output.twice }}"}
output: "${{ state }}"
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, nil, nil))
	if got := output(t, e); got != `{"seen":2,"taken":4}` {
		t.Fatalf("output %s", got)
	}
	if n := len(p.triesOf("echo")); n != 2 {
		t.Fatalf("%d calls, want 2 (the if: false step calls nothing)", n)
	}
	local := sim.New(t, src, nil)
	local.RunActivities(sim.Echo)
	sameAsLocal(t, evs, local)
}

func TestParallelAndForEachConcurrency(t *testing.T) {
	src := sim.Head + `steps:
  - id: both
    parallel:
      - activity: p.echo
        with: left
      - steps:
          - delay: 1m
          - activity: p.echo
            with: right
  - id: each
    for_each: "${{ input.items }}"
    concurrency: 2
    steps:
      - activity: p.echo
        with: "${{ item * 10 }}"
output: {both: "${{ steps.both.output }}", each: "${{ steps.each.output }}"}
`
	items := []int{1, 2, 3, 4, 5}
	e, _ := newEnv(t)
	evs := run(t, e, startInput(src, map[string]any{"items": items}, nil))
	if got := output(t, e); got != `{"both":["left","right"],"each":[10,20,30,40,50]}` {
		t.Fatalf("output %s", got)
	}
	// concurrency 2: never more than two for_each activities open at once in the history.
	open, most := 0, 0
	for _, ev := range evs {
		if !strings.HasPrefix(ev.Step, "steps[1]") {
			continue
		}
		switch ev.Type {
		case history.ActivityScheduled:
			open++
			most = max(most, open)
		case history.ActivityCompleted:
			open--
		}
	}
	if most != 2 {
		t.Fatalf("at most %d for_each activities open at once, want 2", most)
	}
	local := sim.New(t, src, map[string]any{"items": items})
	local.RunActivities(sim.Echo)
	local.FireTimers(sim.T0.Add(time.Hour))
	local.RunActivities(sim.Echo)
	sameAsLocal(t, evs, local)
}

func TestDelayAndUntil(t *testing.T) {
	src := sim.Head + `steps:
  - delay: 5m
  - delay: {until: "${{ input.until }}"}
  - delay: {until: "${{ input.past }}"}
  - activity: p.echo
    with: done
`
	in := map[string]any{"until": sim.T0.Add(2 * time.Hour).Format(time.RFC3339), "past": sim.T0.Add(-time.Hour).Format(time.RFC3339)}
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, in, nil))
	if got := output(t, e); got != "null" {
		t.Fatalf("output %s", got)
	}
	fired := ofType(evs, history.TimerFired)
	if len(fired) != 3 {
		t.Fatalf("%d timers fired", len(fired))
	}
	if !fired[0].Time.Equal(sim.T0.Add(5*time.Minute)) || !fired[1].Time.Equal(sim.T0.Add(2*time.Hour)) {
		t.Fatalf("timers fired at %s and %s", fired[0].Time, fired[1].Time)
	}
	// A timer already due fires at once, without a Temporal timer.
	if !fired[2].Time.Equal(fired[1].Time) {
		t.Fatalf("past timer fired at %s", fired[2].Time)
	}
	if at := p.triesOf("echo")[0].At; !at.Equal(sim.T0.Add(2 * time.Hour)) {
		t.Fatalf("activity ran at %s", at)
	}
	local := sim.New(t, src, in)
	local.FireTimers(sim.T0.Add(3 * time.Hour))
	local.FireTimers(sim.T0.Add(3 * time.Hour))
	local.FireTimers(sim.T0.Add(3 * time.Hour))
	local.RunActivities(sim.Echo)
	sameAsLocal(t, evs, local)
}
