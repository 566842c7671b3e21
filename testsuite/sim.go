package testsuite

import (
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/expr-lang/expr/vm"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
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

// item is an input due at a virtual time. key lets a cancellation withdraw it.
type item struct {
	at    time.Time
	order int
	key   string
	ev    history.Event
	retry bool // an activity's next try starts: call the mock then
}

type queue []*item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].order < q[j].order
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*item)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// driver plays the engine's part for one run: it owns the virtual clock and the world.
type driver struct {
	f      *File
	c      *Case
	w      *spec.Workflow
	lab    *labels
	r      *interpreter.Run
	loader *spec.Loader
	mocks  []*Mock
	used   map[*Mock]int // shared with children: a mock's results go on in the child
	depth  int
	shard  *history.ShardRef // set when this driver plays a shard child of a sharded for_each

	now, start time.Time
	events     []history.Event
	q          queue
	live       map[string]int // key -> order of the item that still counts
	order      int
	inputs     int
	calls      []Call
	after      []*afterTrigger
	delays     map[string]string // timer id -> step path, for delay timers
	problem    *Problem
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
		mocks: append(append([]*Mock(nil), c.Mocks...), f.Mocks...),
		now:   start, start: start, live: map[string]int{}, delays: map[string]string{}}
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
	sum := sha256.Sum256(d.w.Source)
	st := history.Started{WorkflowID: "test", RunID: "run1", Input: history.MustData(input), SpecFile: d.w.File,
		SpecSource: string(d.w.Source), SpecSHA256: hex.EncodeToString(sum[:]), ExecutionStarted: d.start,
		Rules: history.RulesCurrent, Shard: d.shard} // the engine's rules for new runs (child ids, backoff cap)
	if d.depth > 0 {
		st.WorkflowID = fmt.Sprintf("test/child%d", d.depth)
	}
	d.r = interpreter.New(d.w, st)
	if d.depth == 0 {
		d.arm()
	}
	d.apply(history.Event{Type: history.WorkflowStarted, Data: history.MustData(st)})
	for d.problem == nil && d.r.Closed() == "" && d.q.Len() > 0 {
		it := heap.Pop(&d.q).(*item)
		if it.key != "" {
			if d.live[it.key] != it.order {
				continue // withdrawn: the activity, timer or child was cancelled
			}
			delete(d.live, it.key)
		}
		if it.at.After(d.now) {
			d.now = it.at
		}
		if d.inputs++; d.inputs > MaxInputs {
			d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("the run did not settle after %d inputs (a retry without end, or mocks that never let it finish)", MaxInputs)}
			break
		}
		if it.retry {
			sched, _ := d.r.Activity(it.ev.ActivityExecutionID)
			d.call(it.ev.ActivityExecutionID, it.ev.Step, it.ev.Attempt, sched)
			continue
		}
		if isOutcome(it.ev.Type) && !d.r.Expects(it.ev.ActivityExecutionID, it.ev.Attempt) {
			continue // the engine drops a superseded try's result
		}
		d.apply(it.ev)
	}
	return d.outcome()
}

func isOutcome(t history.EventType) bool {
	return t == history.ActivityCompleted || t == history.ActivityAttemptFailed || t == history.ActivityTimedOut
}

// arm queues the case's signals, cancel and terminate that come at a virtual time, and keeps
// those that come after a step for when it completes.
func (d *driver) arm() {
	add := func(t *Trigger, ev history.Event) {
		if t.After != "" {
			d.after = append(d.after, &afterTrigger{t: t, ev: ev})
			return
		}
		d.push(d.start.Add(t.At), "", ev)
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

func (d *driver) push(at time.Time, key string, ev history.Event) *item {
	d.order++
	it := &item{at: at, order: d.order, key: key, ev: ev}
	if key != "" {
		d.live[key] = d.order
	}
	heap.Push(&d.q, it)
	return it
}

// apply records an input at the current virtual time, then the decisions it yields, and acts
// on them as the engine would.
func (d *driver) apply(ev history.Event) {
	ev.Seq, ev.Time = uint64(len(d.events)+1), d.now
	d.events = append(d.events, ev)
	out, err := d.r.Apply(ev)
	if err != nil {
		d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("the interpreter refused %s: %v", ev.Type, err)}
		return
	}
	d.completed(ev)
	for _, e := range out {
		e.Seq = uint64(len(d.events) + 1)
		d.events = append(d.events, e)
		d.effect(e)
		d.completed(e)
	}
}

func (d *driver) effect(e history.Event) {
	switch e.Type {
	case history.ActivityScheduled:
		sched, _ := history.DataOf[history.ActivitySchedule](e)
		d.call(e.ActivityExecutionID, e.Step, 1, sched)
	case history.ActivityRetryScheduled:
		rs, _ := history.DataOf[history.RetrySchedule](e)
		it := d.push(rs.AvailableAt, "act:"+e.ActivityExecutionID,
			history.Event{Step: e.Step, ActivityExecutionID: e.ActivityExecutionID, Attempt: rs.NextAttempt})
		it.retry = true
	case history.ActivityCancelled:
		delete(d.live, "act:"+e.ActivityExecutionID)
	case history.TimerScheduled:
		ts, _ := history.DataOf[history.TimerSchedule](e)
		d.push(ts.FireAt, "timer:"+ts.TimerID, history.Event{Type: history.TimerFired, Data: history.MustData(history.TimerRef{TimerID: ts.TimerID})})
		if ts.Purpose == "delay" {
			d.delays[ts.TimerID] = e.Step
		}
	case history.TimerCancelled:
		ref, _ := history.DataOf[history.TimerRef](e)
		delete(d.live, "timer:"+ref.TimerID)
	case history.ChildWorkflowScheduled, history.WorkflowWaitScheduled:
		d.child(e)
	case history.ChildWorkflowCancelRequested:
		delete(d.live, "child:"+e.Step)
	}
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
	id := d.lab.ids[static(step)]
	keep := d.after[:0]
	for _, a := range d.after {
		if a.t.After == id || a.t.After == d.lab.label(step) {
			d.push(d.now, "", a.ev)
		} else {
			keep = append(keep, a)
		}
	}
	d.after = keep
}

// call answers one try of an activity from the mocks.
func (d *driver) call(execID, step string, attempt int, sched history.ActivitySchedule) {
	var in any
	_ = json.Unmarshal(sched.Input, &in)
	name := sched.Plugin + "." + sched.Activity
	label := d.lab.label(step)
	if d.depth == 0 || d.shard != nil { // a shard child's calls are its parent's (child.go)
		d.calls = append(d.calls, Call{Activity: name, Step: label, Attempt: attempt, Input: in, At: d.now.Sub(d.start)})
	}
	m, err := d.mock(name, step, in)
	if err != nil {
		d.problem = err
		return
	}
	if m == nil {
		d.problem = &Problem{Pos: d.c.Pos, Message: fmt.Sprintf("no mock answers %s at step %s (input %s); add one to the case's mocks",
			name, label, compact(in))}
		return
	}
	i := min(d.used[m], len(m.Results)-1)
	d.used[m]++
	res := m.Results[i]
	ev := history.Event{Step: step, ActivityExecutionID: execID, Attempt: attempt}
	limit := time.Duration(sched.TimeoutMS) * time.Millisecond
	timedOut := func(why string, after time.Duration) {
		ev.Type = history.ActivityTimedOut
		ev.Data = history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryTimeout,
			PropagationKind: "timeout", Type: why, Message: fmt.Sprintf("attempt %d exceeded its %s", attempt, why)}})
		d.push(d.now.Add(after), "act:"+execID, ev)
	}
	switch {
	case res.Timeout == "heartbeat_timeout":
		timedOut("heartbeat_timeout", cmpOr(time.Duration(sched.HeartbeatTimeout)*time.Millisecond, res.Takes))
	case res.Timeout != "":
		timedOut("timeout", cmpOr(limit, res.Takes))
	case limit > 0 && res.Takes > limit:
		timedOut("timeout", limit)
	case res.Error != nil:
		ev.Type = history.ActivityAttemptFailed
		ev.Data = history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryActivity,
			PropagationKind: "activity", Type: res.Error.Type, Message: res.Error.Message, NonRetryable: res.Error.NonRetryable}})
		d.push(d.now.Add(res.Takes), "act:"+execID, ev)
	default:
		out := res.Output
		if res.Echo {
			out = in
		}
		ev.Type = history.ActivityCompleted
		ev.Data = history.MustData(history.ActivityResult{Output: mustJSON(out)})
		d.push(d.now.Add(res.Takes), "act:"+execID, ev)
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
	o := &Outcome{Events: d.events, Status: history.StatusRunning, Calls: d.calls, Problem: d.problem, labels: d.lab}
	if d.r != nil {
		o.State = d.r.State()
	}
	if len(d.events) > 0 {
		last := d.events[len(d.events)-1]
		o.Duration = last.Time.Sub(d.start)
		if last.Type.Terminal() {
			o.Status, o.ClosedReason = history.ClosedBy(last)
			c, _ := history.DataOf[history.Closed](last)
			o.Failure = c.Failure
			if last.Type == history.WorkflowCompleted {
				_ = json.Unmarshal(c.Output, &o.Output)
			}
		}
	}
	return o
}
