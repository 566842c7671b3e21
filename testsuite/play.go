package testsuite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/expr-lang/expr/vm"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/spec"
)

// T0 is when every case starts, in virtual time.
var T0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxInputs bounds the inputs one case may feed its run (retries without end, a loop of
// signals): past it the case fails instead of spinning.
const MaxInputs = 100_000

// maxChildDepth bounds run_workflow nesting when children run for real.
const maxChildDepth = 16

// Outcome is what one run of a case did.
type Outcome struct {
	Events       []history.Event
	Status       string // running when the run did not close
	ClosedReason string
	Output       any
	State        map[string]any
	Failure      *history.Failure
	Calls        []Call
	Duration     time.Duration // virtual, from start to the last event
	Problem      *Problem      // why the case could not be played to its end
	labels       *labels
}

// Call is one try of an activity, as the mocks answered it.
type Call struct {
	Activity string        `json:"activity"` // plugin.activity
	Step     string        `json:"step"`     // label: "charge", "pack@1.steps[0]"
	Attempt  int           `json:"attempt"`
	Input    any           `json:"input"`
	At       time.Duration `json:"-"`
}

// Problem is a case that cannot be played: an activity no mock answers, bad input.
type Problem struct {
	Pos     spec.Pos
	Message string
}

// driver plays one case's world around the in-memory host of one run: it answers the tries
// from the case's mocks, queues the case's signals and cancels, and closes children.
type driver struct {
	f      *File
	c      *Case
	w      *spec.Workflow
	lab    *labels
	h      *sim.Host // nil until the run starts
	loader *spec.Loader
	mocks  []*Mock
	used   map[*Mock]int // shared with children: a mock's results go on in the child
	depth  int
	shard  *history.ShardRef // set when this driver plays a shard child of a sharded for_each

	start   time.Time
	inputs  int
	calls   []Call
	after   []*afterTrigger
	delays  map[string]string // timer id -> step path, for delay timers
	problem *Problem
}

type afterTrigger struct {
	t  *Trigger
	ev history.Event
}

// Play runs case c of file f against workflow w (loaded from f.Workflow) to its end.
func Play(f *File, c *Case, w *spec.Workflow, loader *spec.Loader) *Outcome {
	d := newDriver(f, c, w, loader, map[*Mock]int{}, 0, T0)
	return d.play(c.Input, c.Pos)
}

func newDriver(f *File, c *Case, w *spec.Workflow, loader *spec.Loader, used map[*Mock]int, depth int, start time.Time) *driver {
	return &driver{f: f, c: c, w: w, lab: newLabels(w), loader: loader, used: used, depth: depth,
		mocks: append(append([]*Mock(nil), c.Mocks...), f.Mocks...), start: start, delays: map[string]string{}}
}

func (d *driver) play(input any, inputPos spec.Pos) *Outcome {
	if input == nil {
		input = map[string]any{} // as the engine starts a run given no input (or null)
	}
	if d.w.InputSchema != nil && d.shard == nil { // a shard child's input is its slice
		if err := spec.ValidateInput(d.w.InputSchema, input); err != nil {
			d.problem = &Problem{Pos: inputPos, Message: "input: " + err.Error()}
			return d.outcome()
		}
	}
	wfID := "test"
	if d.depth > 0 {
		wfID = fmt.Sprintf("test/child%d", d.depth)
	}
	st := sim.Started(wfID, "run1", d.w.File, d.w.Source, input, d.start)
	st.Shard = d.shard
	d.h = sim.NewHost(d.w, st, d.start)
	d.h.Recorded = d.recorded
	if d.depth == 0 {
		d.arm()
	}
	if _, err := d.h.Begin(); err != nil {
		d.refused(history.WorkflowStarted, err)
	}
	for d.problem == nil && d.h.R.Closed() == "" {
		ev, ok := d.h.Next()
		if !ok {
			break
		}
		if d.inputs++; d.inputs > MaxInputs {
			d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("the run did not settle after %d inputs (a retry without end, or mocks that never let it finish)", MaxInputs)}
			break
		}
		if ev.Type == history.ActivityScheduled || ev.Type == history.ActivityRetryScheduled {
			d.call(d.h.TryOf(ev)) // a retry is due: its mock is called now
			continue
		}
		if _, err := d.h.Deliver(ev); err != nil {
			d.refused(ev.Type, err)
		}
	}
	return d.outcome()
}

func (d *driver) refused(t history.EventType, err error) {
	d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("the interpreter refused %s: %v", t, err)}
}

// arm queues the case's signals, cancel and terminate that come at a virtual time, and keeps
// those that come after a step for when it completes.
func (d *driver) arm() {
	add := func(t *Trigger, ev history.Event) {
		if t.After != "" {
			d.after = append(d.after, &afterTrigger{t: t, ev: ev})
			return
		}
		d.h.Due(d.start.Add(t.At), ev)
	}
	for _, s := range d.c.Signals {
		add(s, history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: s.Name, Data: history.MustData(s.Data)})})
	}
	if t := d.c.Cancel; t != nil {
		add(t, history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: reasonOr(t, "cancelled by the test")})})
	}
	if t := d.c.Term; t != nil {
		add(t, history.Event{Type: history.TerminateRequested, Data: history.MustData(history.CancelRequest{Reason: reasonOr(t, "terminated by the test")})})
	}
}

func reasonOr(t *Trigger, def string) string {
	if t.Reason != "" {
		return t.Reason
	}
	return def
}

// recorded does the part of the world for each event the host records: a first try's mock is
// called at once, a delay timer remembered for the triggers that wait for its step, a child
// run or mocked; then the triggers waiting for the step the event completes fire.
func (d *driver) recorded(e history.Event) {
	switch e.Type {
	case history.ActivityScheduled:
		d.call(d.h.TryOf(e))
	case history.TimerScheduled:
		ts, _ := history.DataOf[history.TimerSchedule](e)
		if ts.Purpose == "delay" {
			d.delays[ts.TimerID] = e.Step
		}
	case history.ChildWorkflowScheduled, history.WorkflowWaitScheduled:
		d.child(e)
	}
	d.completed(e)
}

// completed fires the triggers waiting for the step an event completes.
func (d *driver) completed(e history.Event) {
	if len(d.after) == 0 {
		return
	}
	step := e.Step
	switch e.Type {
	case history.ActivityCompleted, history.ActivityFailed, history.SignalApplied, history.StepFailed,
		history.ChildWorkflowCompleted, history.ChildWorkflowFailed, history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
	case history.TimerFired:
		ref, _ := history.DataOf[history.TimerRef](e)
		if step = d.delays[ref.TimerID]; step == "" {
			return
		}
	default:
		return
	}
	id := d.lab.ids[history.StaticStepPath(step)]
	keep := d.after[:0]
	for _, a := range d.after {
		if a.t.After == id || a.t.After == d.lab.label(step) {
			d.h.Due(d.h.Now, a.ev)
		} else {
			keep = append(keep, a)
		}
	}
	d.after = keep
}

// call answers one try of an activity from the mocks: its outcome is due when the mock
// says it takes, or when the try times out.
func (d *driver) call(tr sim.Try) {
	name := tr.Schedule.Plugin + "." + tr.Schedule.Activity
	label := d.lab.label(tr.Step)
	now := d.h.Now
	if d.depth == 0 || d.shard != nil { // a shard child's calls are its parent's (child.go)
		d.calls = append(d.calls, Call{Activity: name, Step: label, Attempt: tr.Attempt, Input: tr.Input, At: now.Sub(d.start)})
	}
	m, err := d.mock(name, tr.Step, tr.Input)
	if err != nil {
		d.problem = err
		return
	}
	if m == nil {
		d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("no mock answers %s at step %s (input %s); add one to the case's mocks",
			name, label, compact(tr.Input))}
		return
	}
	i := min(d.used[m], len(m.Results)-1)
	d.used[m]++
	res := m.Results[i]
	limit := time.Duration(tr.Schedule.TimeoutMS) * time.Millisecond
	timedOut := func(why string, after time.Duration) {
		d.h.Due(now.Add(after), sim.Result(tr, nil, &history.Failure{Category: history.CategoryTimeout,
			PropagationKind: "timeout", Type: why, Message: fmt.Sprintf("attempt %d exceeded its %s", tr.Attempt, why)}))
	}
	switch {
	case res.Timeout == "heartbeat_timeout":
		timedOut("heartbeat_timeout", cmpOr(time.Duration(tr.Schedule.HeartbeatTimeout)*time.Millisecond, res.Takes))
	case res.Timeout != "":
		timedOut("timeout", cmpOr(limit, res.Takes))
	case limit > 0 && res.Takes > limit:
		timedOut("timeout", limit)
	case res.Error != nil:
		d.h.Due(now.Add(res.Takes), sim.Result(tr, nil, &history.Failure{Category: history.CategoryActivity,
			PropagationKind: "activity", Type: res.Error.Type, Message: res.Error.Message, NonRetryable: res.Error.NonRetryable}))
	default:
		out := res.Output
		if res.Echo {
			out = tr.Input
		}
		d.h.Due(now.Add(res.Takes), sim.Result(tr, out, nil))
	}
}

func cmpOr(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return history.MustData(v)
}

// mock finds the first mock, the case's before the file's, that answers this call.
func (d *driver) mock(name, step string, in any) (*Mock, *Problem) {
	for _, m := range d.mocks {
		if m.Activity != name || (m.Step != "" && !d.lab.matches(m.Step, step)) {
			continue
		}
		if m.When != nil {
			ok, err := runWhen(m.When, in)
			if err != nil {
				return nil, &Problem{Pos: m.Pos, Message: fmt.Sprintf("when %q: %v", m.WhenSrc, err)}
			}
			if !ok {
				continue
			}
		}
		return m, nil
	}
	return nil, nil
}

func runWhen(p *vm.Program, in any) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	m := vm.VM{MemoryBudget: spec.MemoryBudget} // the budget workflow expressions get
	out, err := m.Run(p, map[string]any{"input": in})
	if err != nil {
		return false, err
	}
	b, _ := out.(bool)
	return b, nil
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func (d *driver) outcome() *Outcome {
	o := &Outcome{Status: history.StatusRunning, Calls: d.calls, Problem: d.problem, labels: d.lab}
	if d.h == nil {
		return o
	}
	o.Events, o.State = d.h.Events, d.h.R.State()
	if len(o.Events) > 0 {
		last := d.h.Last()
		o.Duration = last.Time.Sub(d.start)
		if c, ok := d.h.Closing(); ok {
			o.Status, o.ClosedReason = history.ClosedBy(last)
			o.Failure = c.Failure
			o.Output = d.h.Output()
		}
	}
	return o
}
