package server

import (
	"regexp"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Step statuses of the step tree. A step's history is its events (those whose step is the
// step's path or, inside a for_each, one of its instances' paths); the history has no
// "step started" event, so a step with no events is StepNone: not reached yet, skipped by
// its `if`, or one that records nothing (a `set`).
const (
	StepNone      = "none"
	StepRunning   = "running"
	StepRetrying  = "retrying"
	StepWaiting   = "waiting"
	StepCompleted = "completed"
	StepFailed    = "failed"
	StepCancelled = "cancelled"
)

// StepRow is one step of a run's step tree, flattened in spec order with its depth.
type StepRow struct {
	Depth     int
	Path      string // positional, for machines (data-path)
	Name      string // for a person: history.StepName with the spec's ids
	ID        string
	Kind      string
	Detail    string // plugin.activity, signal name, child workflow...
	Status    string
	Start     time.Time // first event of the step (of any instance)
	End       time.Time // last event, once the step is finished
	Instances int       // for_each instances with events (0 outside a loop)
	// Compensation is the status of the step's compensation, if one ran.
	Compensation string
	Error        string // the last failure message recorded at the step
}

// Duration is End-Start for a finished step, else 0.
func (r StepRow) Duration() time.Duration {
	if r.End.IsZero() || r.Start.IsZero() {
		return 0
	}
	return r.End.Sub(r.Start)
}

// Leaf reports whether the step does the work itself rather than through child steps.
func (r StepRow) Leaf() bool {
	switch spec.Kind(r.Kind) {
	case spec.KindSteps, spec.KindParallel, spec.KindForEach:
		return false
	}
	return true
}

// instanceMark is the "@N" a for_each instance adds to the paths of its steps.
var instanceMark = regexp.MustCompile(`@\d+`)

// stepState folds the events of one step instance.
type stepState struct {
	status       string
	start, end   time.Time
	compensation string
	err          string
}

func stepDone(status string) bool {
	return status == StepCompleted || status == StepFailed || status == StepCancelled
}

// fold applies one event. Once an instance is finished only a failure changes it (a step
// whose timer fired can still fail): a later timer cancel or late event is bookkeeping.
func (st *stepState) fold(ev history.Event) {
	if st.start.IsZero() {
		st.start = ev.Time
	}
	next := ""
	switch ev.Type {
	case history.ActivityScheduled, history.ActivityStarted, history.ChildWorkflowScheduled, history.WorkflowWaitScheduled:
		next = StepRunning
	case history.ActivityRetryScheduled:
		next = StepRetrying
	case history.TimerScheduled:
		next = StepWaiting
	case history.ActivityCompleted, history.TimerFired, history.SignalApplied, history.ChildWorkflowCompleted, history.WorkflowWaitCompleted:
		next = StepCompleted
	case history.ActivityFailed, history.StepFailed, history.ChildWorkflowFailed, history.WorkflowWaitFailed:
		next = StepFailed
	case history.ActivityCancelled:
		next = StepCancelled
	case history.TimerCancelled:
		if st.status == StepWaiting {
			next = StepCancelled
		}
	case history.CompensationStarted:
		st.compensation = "started"
	case history.CompensationCompleted:
		st.compensation = "completed"
	case history.CompensationFailed:
		st.compensation = "failed"
	}
	if f, ok := FailureOf(ev); ok && ev.Type != history.CompensationFailed {
		st.err = f.Message
	}
	if next == "" || (stepDone(st.status) && next != StepFailed) {
		return
	}
	st.status = next
	if stepDone(next) {
		st.end = ev.Time
	}
}

// StepTree lays a run's spec out as rows, each with the status and timing its events give.
// It needs the spec text the run recorded (WorkflowStarted); it returns nil for a history it
// cannot read, as a damaged run still deserves the rest of its page.
func StepTree(events []history.Event, open bool) []StepRow {
	w := RunSpec(events)
	if w == nil {
		return nil
	}
	inst := map[string]map[string]*stepState{} // static path -> instance path -> state
	for _, ev := range events[1:] {
		if ev.Step == "" {
			continue
		}
		static := instanceMark.ReplaceAllString(ev.Step, "")
		m := inst[static]
		if m == nil {
			m = map[string]*stepState{}
			inst[static] = m
		}
		s := m[ev.Step]
		if s == nil {
			s = &stepState{}
			m[ev.Step] = s
		}
		s.fold(ev)
	}
	if open {
		// A signal wait records no event when it begins; the replay probe finds the waiters.
		for _, w := range signalWaits(events) {
			static := instanceMark.ReplaceAllString(w.Step, "")
			if inst[static] == nil {
				inst[static] = map[string]*stepState{}
			}
			if s := inst[static][w.Step]; s == nil || !stepDone(s.status) {
				inst[static][w.Step] = &stepState{status: StepWaiting, start: w.Since}
			}
		}
	}
	t := &stepTree{inst: inst, open: open, ids: w.StepIDs()}
	t.add(w.Steps, 0)
	if len(w.OnCancel) > 0 {
		t.add(w.OnCancel, 0)
	}
	return t.rows
}

type stepTree struct {
	ids  map[string]string // step path -> id, for row names
	inst map[string]map[string]*stepState
	open bool
	rows []StepRow
}

// add appends steps and their descendants, and returns their rows' aggregate status.
func (t *stepTree) add(steps []*spec.Step, depth int) []string {
	var statuses []string
	for _, s := range steps {
		i := len(t.rows)
		t.rows = append(t.rows, StepRow{Depth: depth, Path: s.Path, Name: history.StepName(s.Path, t.ids), ID: s.ID, Kind: string(s.Kind), Detail: detailOf(s)})
		var kids []string
		for _, group := range [][]*spec.Step{s.Steps, s.Parallel, s.Catch, s.CompensateWith} {
			kids = append(kids, t.add(group, depth+1)...)
		}
		row := &t.rows[i]
		t.own(row)
		if !row.Leaf() {
			row.Status = t.aggregate(row.Status, kids)
			for _, k := range t.rows[i+1:] {
				if row.Start.IsZero() || (!k.Start.IsZero() && k.Start.Before(row.Start)) {
					row.Start = k.Start
				}
				if k.End.After(row.End) {
					row.End = k.End
				}
			}
			if !stepDone(row.Status) {
				row.End = time.Time{}
			}
		}
		statuses = append(statuses, row.Status)
	}
	return statuses
}

// own fills a row from the step's own events, across its for_each instances.
func (t *stepTree) own(row *StepRow) {
	row.Status = StepNone
	m := t.inst[row.Path]
	if len(m) == 0 {
		return
	}
	if len(m) > 1 || instanceMark.MatchString(anyInstance(m)) {
		row.Instances = len(m)
	}
	var statuses []string
	allDone := true
	for _, s := range m {
		if s.status == "" {
			s.status = StepRunning // events, none that says how far: it has begun
		}
		statuses = append(statuses, s.status)
		if row.Start.IsZero() || s.start.Before(row.Start) {
			row.Start = s.start
		}
		if !stepDone(s.status) {
			allDone = false
		} else if s.end.After(row.End) {
			row.End = s.end
		}
		row.Compensation = firstNonEmpty(row.Compensation, s.compensation)
		row.Error = firstNonEmpty(row.Error, s.err)
	}
	row.Status = worstStatus(statuses)
	if !allDone {
		row.End = time.Time{}
	}
}

// aggregate is a composite step's status from its own and its children's statuses.
func (t *stepTree) aggregate(own string, kids []string) string {
	if own == StepFailed || own == StepCancelled {
		return own
	}
	s := worstStatus(kids)
	if s == StepCompleted && t.open {
		for _, k := range kids {
			if k == StepNone {
				return StepRunning // some children done, others not reached yet
			}
		}
	}
	return s
}

// worst orders statuses by what an operator must see first.
func worstStatus(statuses []string) string {
	rank := map[string]int{StepFailed: 6, StepRetrying: 5, StepWaiting: 4, StepRunning: 3, StepCancelled: 2, StepCompleted: 1, StepNone: 0}
	out, n := StepNone, -1
	for _, s := range statuses {
		if rank[s] > n {
			out, n = s, rank[s]
		}
	}
	return out
}

func anyInstance(m map[string]*stepState) string {
	for k := range m {
		return k
	}
	return ""
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// detailOf names what a step does, for the tree's detail column.
func detailOf(s *spec.Step) string {
	switch s.Kind {
	case spec.KindActivity:
		return s.Plugin + "." + s.Activity
	case spec.KindWaitForSignal:
		return "signal " + s.Signal
	case spec.KindRunWorkflow:
		return s.RunWorkflow
	case spec.KindDelay:
		if s.Delay.D > 0 {
			return s.Delay.D.String()
		}
	}
	return ""
}
